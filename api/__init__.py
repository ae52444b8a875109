"""The client API: Mastodon's REST API and OAuth 2, so that unmodified Mastodon apps
sign in and read and write the site.

It is another front door, not another site: every endpoint calls the services
and selectors the HTML page that does the same thing calls (``posts.services``,
``posts.selectors``, ``relations.selectors``, ``timelines.home``), and turns
their refusals (``feed_project.refusals``) into Mastodon's JSON errors in one
place (``api.errors``). What a client sees is shaped in ``api.entities``;
ids are timeline keys written as decimal numbers (``posts.ids``). docs/API.md
says what is supported so far.
"""
