"""``/settings/muted-words/``: a reader's muted words, added and taken back."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from feed_project.ratelimits import ratelimit
from relations import muted_words


class MutedWordForm(forms.Form):
    word = forms.CharField(
        max_length=muted_words.MAX_PHRASE_LENGTH,
        label="Word or phrase",
        help_text="Whole words (\u201chell\u201d leaves \u201chello\u201d alone); "
        "Chinese, Japanese or Korean text matches anywhere.",
    )
    expires_in_days = forms.IntegerField(
        required=False, min_value=1, max_value=3650, label="For how many days (empty: always)"
    )

    def clean_word(self) -> str:
        word = muted_words.normalize(self.cleaned_data["word"])
        if not word:
            raise forms.ValidationError("Write a word or a phrase.")
        return word


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def muted_words_page(request: HttpRequest) -> HttpResponse:
    form = MutedWordForm(request.POST if request.method == "POST" else None)
    if form.is_bound and form.is_valid():
        try:
            muted_words.mute_word(
                user=request.user,
                phrase=form.cleaned_data["word"],
                expires_in_days=form.cleaned_data["expires_in_days"],
            )
        except muted_words.TooManyWords as refused:
            form.add_error("word", refused.message)
        else:
            messages.success(request, f"Muted \u201c{form.cleaned_data['word']}\u201d.")
            return redirect("relations:muted_words")
    context = {"form": form, "words": list(muted_words.words_of(request.user))}
    return render(
        request, "relations/muted_words.html", context, status=400 if form.errors else 200
    )


@require_POST
@login_required
@ratelimit("follow")
def delete_muted_word(request: HttpRequest, word_id: int) -> HttpResponse:
    if muted_words.unmute_word(user=request.user, word_id=word_id):
        messages.success(request, "The word is no longer muted.")
    else:
        messages.info(request, "No such muted word.")
    return redirect("relations:muted_words")
