"""Admin pieces shared by the apps."""

from typing import Any

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import prefetch_related_objects
from django.http import HttpRequest


class RelatedAfterThePage(admin.ModelAdmin):
    """A list whose rows point at rows on other shards (other users, posts): those
    load after the page, one query by id each (``related_after_page``), not by a
    join a Citus cluster refuses (docs/SCALING.md)."""

    related_after_page: tuple[str, ...] = ()
    list_select_related = False

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        related = self.related_after_page

        class Routed(ChangeList):
            def get_results(self, request: HttpRequest) -> None:
                super().get_results(request)
                prefetch_related_objects(self.result_list, *related)

        return Routed


class ReadOnlyAdmin(admin.ModelAdmin):
    """A list to read: rows here are written by services, never by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
