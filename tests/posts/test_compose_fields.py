"""The compose box: a blank one is rendered once per process (posts/templatetags/compose.py)."""

from django.template.loader import render_to_string
from django.test import override_settings

from posts.forms import PostForm
from posts.templatetags import compose


def _fresh(form: PostForm) -> str:
    return render_to_string("posts/_compose_fields.html", {"form": form})


def test_a_blank_box_is_the_fresh_rendering_and_kept():
    compose._blank.cache_clear()

    first = compose.compose_fields(PostForm())

    assert first == _fresh(PostForm())
    assert 'name="text"' in first and 'name="media"' in first
    assert compose.compose_fields(PostForm()) is first  # kept, not rendered again


def test_a_bound_form_shows_its_text_and_errors_each_time():
    compose.compose_fields(PostForm())  # a blank box is kept
    form = PostForm(data={"text": "", "spoiler_text": "x" * 500})
    assert not form.is_valid()

    html = compose.compose_fields(form)

    assert html == _fresh(form)
    assert "x" * 500 in html and "errorlist" in html


def test_a_reply_box_keeps_its_initial_values():
    compose.compose_fields(PostForm())
    form = PostForm(initial={"in_reply_to": "00000S0RH726WW00", "visibility": "followers"})

    html = compose.compose_fields(form)

    assert 'value="00000S0RH726WW00"' in html
    assert '<option value="followers" selected>' in html


@override_settings(DEBUG=True)
def test_with_debug_nothing_is_kept():
    compose._blank.cache_clear()

    compose.compose_fields(PostForm())

    assert compose._blank.cache_info().currsize == 0
