"""The soak's clients: people signed up over HTTP, each doing what people do until told to stop.

A client's session is a ``Browser`` (cookies, the CSRF token, no redirect
followed). It posts the way the home page's compose box does with JavaScript
(``X-Fragment: 1``: the answer is the new post, so the client learns its id
and may delete it later), reads the home page and its next page, follows and
unfollows the other clients, likes and reposts what it read, and deletes one
of its own posts now and then, 50-250 ms apart. Every request is recorded
with its times and status; every post answered as written is *accepted*.
"""

import http.client
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

PASSWORD = "soak-password-long-enough-7"
# What a client does next, and how often (weights, out of 100).
ACTIONS = {
    "post": 35,
    "read": 35,  # the home page, then its next page
    "follow_or_unfollow": 15,
    "like_or_repost": 10,
    "delete": 5,
}
THINK_SECONDS = (0.05, 0.25)
# More follows than unfollows, so that each client follows most of the others
# most of the time while the graph keeps changing.
UNFOLLOW_SHARE = 1 / 3

POST_ID = re.compile(r'data-post-id="([0-9A-Za-z]+)"')
NEXT = re.compile(r'<a rel="next" href="([^"]+)"')


@dataclass
class Request:
    client: int
    started: float  # time.monotonic()
    ended: float
    action: str
    method: str
    path: str
    status: int  # 0: the connection failed or was cut

    @property
    def seconds(self) -> float:
        return self.ended - self.started


@dataclass
class Accepted:
    """A post the site answered as written (201 with the post)."""

    post_id: str
    client: int
    at: float  # time.time() as the answer came


class Browser:
    """One person's HTTP session: cookies, the CSRF token, no redirects followed."""

    def __init__(self, port: int, client: int, record: Callable[[Request], None]) -> None:
        self.port = port
        self.client = client
        self.record = record
        self.cookies: dict[str, str] = {}
        self.location = ""  # the last answer's Location header
        self.action = ""  # what the requests being made are for (the report groups by it)

    def request(
        self,
        method: str,
        path: str,
        form: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        headers = {"Host": "127.0.0.1", **(headers or {})}
        body = None
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if form is not None:
            form = {**form, "csrfmiddlewaretoken": self.cookies.get("csrftoken", "")}
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        started = time.monotonic()
        try:
            # Longer than gunicorn's 30 s worker timeout: a hung request is cut by
            # the server and counted, never given up on here first.
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=35)
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode(errors="replace")
            status = response.status
            self.location = response.getheader("Location", "")
            for header, value in response.getheaders():
                if header.lower() == "set-cookie":
                    name, _, rest = value.partition("=")
                    self.cookies[name.strip()] = rest.split(";", 1)[0]
            connection.close()
        except OSError:
            status, text, self.location = 0, "", ""
        request = Request(self.client, started, time.monotonic(), self.action, method, path, status)
        self.record(request)
        return status, text

    def get(self, path: str) -> tuple[int, str]:
        return self.request("GET", path)

    def post(
        self, path: str, form: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        if "csrftoken" not in self.cookies:
            self.get("/accounts/login/")
        return self.request("POST", path, form or {}, headers)

    def signed_out(self, status: int) -> bool:
        return status == 302 and self.location.startswith("/accounts/login/")


def walk_home_feed(browser: Browser) -> tuple[list[str], list[int]]:
    """The post ids the home feed shows, page after page (``rel=next``) to its end, as
    the browser's own session; and the statuses of the pages that were not a 200."""
    shown: list[str] = []
    failed: list[int] = []
    path, seen = "/", set()
    while path and path not in seen:
        seen.add(path)
        status, text = browser.get(path)
        if status != 200:
            failed.append(status)
            break
        shown += POST_ID.findall(text)
        found = NEXT.search(text)
        path = "/" + found.group(1).replace("&amp;", "&").lstrip("/") if found else ""
    return shown, failed


class Client(threading.Thread):
    def __init__(
        self,
        number: int,
        *,
        port: int,
        tag: str,
        seed: int,
        usernames: list[str],
        stopping: threading.Event,
        record: Callable[[Request], None],
        accepted: Callable[[Accepted], None],
    ) -> None:
        super().__init__(name=f"soak-client-{number}", daemon=True)
        self.number = number
        self.random = random.Random(seed * 1000 + number)
        self.browser = Browser(port, number, record)
        self.username = f"soak{tag}c{number}"
        self.tag = tag
        self.usernames = usernames  # every client's, shared; appended as each signs up
        self.stopping = stopping
        self.accepted = accepted
        self.seen_posts: list[str] = []  # on the last home page read
        self.following: set[str] = set()  # as the answers said
        self.own_posts: list[str] = []  # accepted, not yet deleted
        self.deleted: set[str] = set()  # deletes answered as done
        self.maybe_deleted: set[str] = set()  # deletes whose answer was an error or cut
        self.posts = 0

    def run(self) -> None:
        self.sign_up()
        actions, weights = list(ACTIONS), list(ACTIONS.values())
        while not self.stopping.is_set():
            action = self.random.choices(actions, weights)[0]
            self.browser.action = action
            getattr(self, action)()
            self.stopping.wait(self.random.uniform(*THINK_SECONDS))

    def sign_up(self) -> None:
        self.browser.action = "sign_up"
        for _ in range(50):
            self.browser.get("/accounts/signup/")
            status, _ = self.browser.post(
                "/accounts/signup/",
                {"username": self.username, "display_name": self.username,
                 "email": f"{self.username}@soak.invalid",
                 "password1": PASSWORD, "password2": PASSWORD},
            )  # fmt: skip
            # A 400 after an answer lost to a fault: signed up already, so log in.
            if status == 302 or (status == 400 and self.log_in() == 302):
                break
            time.sleep(0.5)
        self.usernames.append(self.username)

    def log_in(self) -> int:
        action, self.browser.action = self.browser.action, "log_in"
        self.browser.cookies.clear()
        self.browser.get("/accounts/login/")
        status, _ = self.browser.post(
            "/accounts/login/", {"username": self.username, "password": PASSWORD}
        )
        self.browser.action = action
        return status

    def post(self) -> None:
        self.posts += 1
        text = f"soak {self.tag} client {self.number} post {self.posts}"
        status, body = self.browser.post("/posts/new/", {"text": text}, {"X-Fragment": "1"})
        if self.browser.signed_out(status):
            self.log_in()  # refused, not accepted: a log-in whose answer was lost to a fault
        elif status == 201 and (found := POST_ID.search(body)):
            self.own_posts.append(found.group(1))
            self.accepted(Accepted(found.group(1), self.number, time.time()))

    def read(self) -> None:
        status, text = self.browser.get("/")
        if self.browser.signed_out(status):
            self.log_in()
        if status != 200:
            return
        self.seen_posts = POST_ID.findall(text) or self.seen_posts
        if found := NEXT.search(text):
            self.browser.get("/" + found.group(1).replace("&amp;", "&").lstrip("/"))

    def done(self, status: int) -> bool:
        """Whether a form's answer says it was done (302 back); signed out, sign in again."""
        if self.browser.signed_out(status):
            self.log_in()  # a log-in whose answer was lost to a fault: refused, not done
            return False
        return status == 302

    def follow_or_unfollow(self) -> None:
        others = [name for name in self.usernames if name != self.username]
        not_followed = [name for name in others if name not in self.following]
        if self.following and (not not_followed or self.random.random() < UNFOLLOW_SHARE):
            someone = self.random.choice(sorted(self.following))
            if self.done(self.browser.post(f"/@{someone}/unfollow/")[0]):
                self.following.discard(someone)
        elif not_followed:
            someone = self.random.choice(not_followed)
            if self.done(self.browser.post(f"/@{someone}/follow/")[0]):
                self.following.add(someone)

    def like_or_repost(self) -> None:
        if self.seen_posts:
            post_id = self.random.choice(self.seen_posts)
            verb = "like" if self.random.random() < 0.6 else "repost"
            self.done(self.browser.post(f"/posts/{post_id}/{verb}/")[0])

    def delete(self) -> None:
        if not self.own_posts:
            return
        post_id = self.own_posts.pop(self.random.randrange(len(self.own_posts)))
        status, _ = self.browser.post(f"/posts/{post_id}/delete/")
        signed_out = self.browser.signed_out(status)
        if self.done(status):
            self.deleted.add(post_id)
        elif signed_out:
            self.own_posts.append(post_id)  # refused: try again later
        elif status == 0 or status >= 500:  # it may have been done
            self.maybe_deleted.add(post_id)
        # A 404: the post it wrote is not there (the lost posts' check counts it).
