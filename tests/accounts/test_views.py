import pytest
from django.contrib.auth import get_user_model

from accounts.models import User
from tests.conftest import PASSWORD
from tests.factories import UserFactory

SIGNUP = "/accounts/signup/"
LOGIN = "/accounts/login/"
LOGOUT = "/accounts/logout/"
EDIT_PROFILE = "/accounts/profile/"


def signup_data(**overrides: str) -> dict[str, str]:
    data = {
        "username": "dora",
        "display_name": "Dora",
        "email": "dora@example.com",
        "password1": PASSWORD,
        "password2": PASSWORD,
    }
    data.update(overrides)
    return data


@pytest.mark.django_db
def test_signup_page_shows_the_form(client):
    response = client.get(SIGNUP)
    assert response.status_code == 200
    assert b'name="username"' in response.content
    assert b'name="csrfmiddlewaretoken"' in response.content


@pytest.mark.embedded
@pytest.mark.django_db
def test_signup_creates_the_account_signs_in_and_lands_on_home(client):
    response = client.post(SIGNUP, signup_data())

    assert response.status_code == 302
    assert response["Location"] == "/"
    user = User.objects.get(username="dora")
    assert user.display_name == "Dora"
    assert user.check_password(PASSWORD)
    home = client.get("/")
    assert home.context["user"] == user
    assert b'action="/posts/new/"' in home.content


def test_signup_with_an_existing_username_in_another_case_is_rejected(client, alice):
    response = client.post(SIGNUP, signup_data(username="ALICE"))

    assert response.status_code == 400
    assert "That username is taken." in response.context["form"].errors["username"]
    assert User.objects.filter(username__iexact="alice").count() == 1


@pytest.mark.parametrize("username", ["dora smith", "dora!", "dóra", "d" * 31, ""])
@pytest.mark.django_db
def test_signup_with_a_malformed_username_is_rejected(client, username):
    response = client.post(SIGNUP, signup_data(username=username))

    assert response.status_code == 400
    assert "username" in response.context["form"].errors
    assert not User.objects.exists()


@pytest.mark.parametrize(
    ("password1", "password2"),
    [("short", "short"), ("12345678901", "12345678901"), ("password", "password")],
)
@pytest.mark.django_db
def test_signup_with_a_weak_password_is_rejected(client, password1, password2):
    response = client.post(SIGNUP, signup_data(password1=password1, password2=password2))

    assert response.status_code == 400
    assert "password1" in response.context["form"].errors
    assert not User.objects.exists()


@pytest.mark.django_db
def test_signup_with_a_password_like_the_username_is_rejected(client):
    response = client.post(
        SIGNUP,
        signup_data(username="doraexplorer", password1="doraexplorer1", password2="doraexplorer1"),
    )

    assert response.status_code == 400
    assert "password1" in response.context["form"].errors


@pytest.mark.django_db
def test_signup_with_two_different_passwords_is_rejected(client):
    response = client.post(SIGNUP, signup_data(password2=PASSWORD + "x"))

    assert response.status_code == 400
    assert "password2" in response.context["form"].errors
    assert not User.objects.exists()


def test_signup_when_signed_in_goes_home(alice_client):
    response = alice_client.get(SIGNUP)

    assert response.status_code == 302
    assert response["Location"] == "/"


def test_login_accepts_the_username_in_any_case(client, alice):
    response = client.post(LOGIN, {"username": "ALICE", "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert client.get("/").context["user"] == alice


def test_login_follows_a_safe_next_and_ignores_an_unsafe_one(client, alice):
    safe = client.post(LOGIN, {"username": "alice", "password": PASSWORD, "next": "/@alice/"})
    client.logout()
    unsafe = client.post(
        LOGIN, {"username": "alice", "password": PASSWORD, "next": "https://evil.example/"}
    )

    assert safe["Location"] == "/@alice/"
    assert unsafe["Location"] == "/"


def test_login_with_a_wrong_password_shows_an_error(client, alice):
    response = client.post(LOGIN, {"username": "alice", "password": "wrong"})

    assert response.status_code == 200
    assert response.context["form"].non_field_errors()
    assert not response.context["user"].is_authenticated


LONG_S, DOTLESS_I = "\u017f", "\u0131"  # PostgreSQL's UPPER() makes them S and I


def full_width(text: str) -> str:
    return "".join(chr(ord(letter) + 0xFEE0) for letter in text)


@pytest.mark.parametrize(
    "look_alike",
    [f"ka{LONG_S}{LONG_S}", f"KA{LONG_S}S", f"KAS{DOTLESS_I}", full_width("kass"), "kass\u200b"],
)
def test_login_refuses_look_alike_letters_even_with_the_right_password(db, client, look_alike):
    UserFactory(username="kass")
    UserFactory(username="kasi")

    response = client.post(LOGIN, {"username": look_alike, "password": PASSWORD})

    assert response.status_code == 200
    assert "username" in response.context["form"].errors
    assert "_auth_user_id" not in client.session


def test_login_still_takes_the_real_name_in_any_case(client, db):
    UserFactory(username="kass")

    response = client.post(LOGIN, {"username": "KASS", "password": PASSWORD})

    assert response["Location"] == "/"


def test_logout_by_get_is_refused(alice_client):
    response = alice_client.get(LOGOUT)

    assert response.status_code == 405
    assert alice_client.get("/").context["user"].is_authenticated


def test_logout_by_post_signs_out(alice_client):
    response = alice_client.post(LOGOUT)

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert not alice_client.get("/").context["user"].is_authenticated


def test_nav_offers_a_logout_form_when_signed_in(alice_client):
    content = alice_client.get("/").content.decode()

    assert f'<form method="post" action="{LOGOUT}">' in content
    assert 'href="/@alice/"' in content


@pytest.mark.django_db
def test_nav_offers_login_and_signup_when_signed_out(client):
    content = client.get("/").content.decode()

    assert f'href="{LOGIN}"' in content
    assert f'href="{SIGNUP}"' in content


@pytest.mark.django_db
def test_edit_profile_needs_login(client):
    response = client.get(EDIT_PROFILE)

    assert response.status_code == 302
    assert response["Location"].startswith(f"{LOGIN}?next=")


def test_edit_profile_shows_the_current_values(alice_client, alice):
    alice.bio = "Curious."
    alice.save(update_fields=["bio"])

    response = alice_client.get(EDIT_PROFILE)

    assert response.status_code == 200
    assert b"Curious." in response.content


def test_edit_profile_saves_display_name_and_bio(alice_client, alice):
    response = alice_client.post(
        EDIT_PROFILE, {"display_name": "Alice L.", "bio": "Down the hole."}
    )

    assert response.status_code == 302
    assert response["Location"] == "/@alice/"
    alice.refresh_from_db()
    assert (alice.display_name, alice.bio) == ("Alice L.", "Down the hole.")


def test_edit_profile_with_an_overlong_bio_is_rejected(alice_client, alice):
    response = alice_client.post(EDIT_PROFILE, {"display_name": "A", "bio": "x" * 301})

    assert response.status_code == 400
    assert "bio" in response.context["form"].errors
    assert get_user_model().objects.get(pk=alice.pk).display_name == "Alice"
