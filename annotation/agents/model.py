"""The model server, as the harness reaches it: chat completions over HTTP, with retries.

Transport failures (no connection, a timeout, 408, 409, 429 and 5xx) are retried with exponential
backoff and jitter, honouring Retry-After, as the OpenAI SDK the published client relies on does
(2 retries, 600 s timeout by default). What is still failing after that raises ModelUnavailable:
the rollout is then `failed` and left out of Pass@k, never counted as a wrong answer. Any other
answer (a 400, a reply without a message) raises it at once: retrying would not change it.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

RETRYABLE_STATUS = {408, 409, 429}  # and every 5xx
BACKOFF_INITIAL_S = 0.5
BACKOFF_MAX_S = 8.0
RETRY_AFTER_MAX_S = 60.0  # a longer Retry-After is not waited for; the backoff applies instead


class ModelUnavailable(RuntimeError):
    """The model server gave no usable answer, after any retries; the message says why."""

    def __init__(self, message: str, *, retries: int = 0, latency_ms: float = 0.0):
        super().__init__(message)
        self.retries, self.latency_ms = retries, latency_ms


@dataclass(frozen=True)
class Completion:
    """One answer of the model server: its message and what it cost."""

    message: dict
    finish_reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    latency_ms: float
    retries: int


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


class ChatClient:
    """POST {base_url}/chat/completions, with the body a protocol builds."""

    def __init__(self, *, base_url: str, api_key: str = "", retries: int = 2, timeout_s: float = 600.0):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key, self.retries, self.timeout_s = api_key, retries, timeout_s

    async def complete(self, body: dict) -> Completion:
        started = time.monotonic()
        for attempt in range(self.retries + 1):
            try:
                reply = await asyncio.to_thread(self._post, body)
                return _completion(reply, (time.monotonic() - started) * 1000, attempt)
            except _Retryable as error:
                if attempt == self.retries:
                    raise ModelUnavailable(
                        f"{error} (after {attempt} retries)",
                        retries=attempt,
                        latency_ms=(time.monotonic() - started) * 1000,
                    ) from None
                await asyncio.sleep(_backoff(attempt, error.retry_after))
        raise AssertionError("unreachable")  # the loop returns or raises

    def _post(self, body: dict) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            detail = error.read()[:200].decode("utf-8", "replace")
            if error.code in RETRYABLE_STATUS or error.code >= 500:
                raise _Retryable(f"model server error {error.code}: {detail}", _retry_after(error)) from None
            raise ModelUnavailable(f"model server error {error.code}: {detail}") from None
        except TimeoutError:
            raise _Retryable(f"no answer within {self.timeout_s:g} s") from None
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException) as error:
            raise _Retryable(f"cannot reach the model server: {getattr(error, 'reason', error)}") from None
        except ValueError as error:  # a body that is not JSON
            raise ModelUnavailable(f"the model server answered something that is not JSON: {error}") from None


def _completion(reply: dict, latency_ms: float, retries: int) -> Completion:
    try:
        choice = reply["choices"][0]
        message = dict(choice["message"])
    except (KeyError, IndexError, TypeError):
        raise ModelUnavailable(f"the model server answered without a message: {str(reply)[:200]}") from None
    usage = reply.get("usage") or {}
    return Completion(
        message=message,
        finish_reason=choice.get("finish_reason"),
        tokens_in=usage.get("prompt_tokens"),
        tokens_out=usage.get("completion_tokens"),
        latency_ms=latency_ms,
        retries=retries,
    )


def _retry_after(error: urllib.error.HTTPError) -> float | None:
    try:
        seconds = float(error.headers.get("Retry-After", ""))
    except (TypeError, ValueError):
        return None
    return seconds if 0 <= seconds <= RETRY_AFTER_MAX_S else None


def _backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds before the next try: Retry-After when the server gave one, else 0.5 s doubling up
    to 8 s, less up to a quarter at random so parallel workers do not retry in step."""
    if retry_after is not None:
        return retry_after
    return min(BACKOFF_INITIAL_S * 2**attempt, BACKOFF_MAX_S) * (1 - 0.25 * random.random())
