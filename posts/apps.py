from django.apps import AppConfig


class PostsConfig(AppConfig):
    name = "posts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import archive, signals
        from posts import archive_part, erasure

        signals.account_deactivated.connect(
            erasure.on_account_deactivated, dispatch_uid="posts.erasure.deactivated"
        )
        signals.account_reactivated.connect(
            erasure.on_account_reactivated, dispatch_uid="posts.erasure.reactivated"
        )
        signals.account_erasing.connect(
            erasure.on_account_erasing, dispatch_uid="posts.erasure.erasing"
        )
        for section in archive_part.SECTIONS:
            archive.register(section)
