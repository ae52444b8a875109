from django.apps import AppConfig


class RelationsConfig(AppConfig):
    name = "relations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import archive
        from accounts.signals import account_erasing, account_unlocked
        from relations import archive_part, erasure, services

        account_erasing.connect(erasure.on_account_erasing, dispatch_uid="relations.erasure")
        account_unlocked.connect(services.on_account_unlocked, dispatch_uid="relations.unlocked")
        for section in archive_part.SECTIONS:
            archive.register(section)
