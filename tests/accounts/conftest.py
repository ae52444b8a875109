"""A real SMTP server in process (aiosmtpd) that the site's mail goes to."""

import email
import re
import threading
import time
from email.message import EmailMessage
from email.policy import default as default_policy

import pytest
from aiosmtpd.controller import Controller

from bench.processes import free_port


class Mailbox:
    """Every mail the SMTP server accepted, parsed; waits for one to arrive."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self._arrived = threading.Condition()
        self.port = 0

    async def handle_DATA(self, server, session, envelope) -> str:
        message = email.message_from_bytes(envelope.content, policy=default_policy)
        with self._arrived:
            self.messages.append(message)
            self._arrived.notify_all()
        return "250 Message accepted for delivery"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if address.lower() in m["To"].lower()]

    def wait_for(self, address: str, count: int = 1, timeout: float = 10.0) -> EmailMessage:
        """The ``count``-th mail to ``address``, waiting for it (a worker sends it)."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.to(address)) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"no mail #{count} to {address}: {len(self.messages)} in all"
                self._arrived.wait(left)
            return self.to(address)[count - 1]

    @staticmethod
    def body(message: EmailMessage) -> str:
        return message.get_body(preferencelist=("plain",)).get_content()

    @classmethod
    def link(cls, message: EmailMessage) -> str:
        """The path of the one site link in a mail."""
        match = re.search(r"https?://[^/\s]+(/\S+)", cls.body(message))
        assert match, cls.body(message)
        return match.group(1)


@pytest.fixture
def mailbox(settings):
    """A running SMTP server on a free port, and the site's mail settings pointing at it."""
    box = Mailbox()
    box.port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=box.port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = box.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    try:
        yield box
    finally:
        controller.stop()
