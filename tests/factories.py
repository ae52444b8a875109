import factory

from accounts.models import User
from posts.services import create_post


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    display_name = factory.LazyAttribute(lambda u: u.username.capitalize())
    password = factory.django.Password("correct-horse-battery")


class PostFactory(factory.Factory):
    """Posts go through the service, so ids, counters and signals are real."""

    class Meta:
        model = dict

    author = factory.SubFactory(UserFactory)
    text = factory.Faker("sentence")

    @classmethod
    def _create(cls, model_class, *, author, text):
        return create_post(author=author, text=text)


def set_email(user: User, address: str) -> None:
    """Give ``user`` an address the way the site does: the row and its claim
    (accounts.unique_names)."""
    user.email = address
    user.save(update_fields=["email"])
