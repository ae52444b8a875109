from django.apps import AppConfig


class RelationsConfig(AppConfig):
    name = "relations"
    default_auto_field = "django.db.models.BigAutoField"
