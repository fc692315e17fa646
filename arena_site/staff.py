"""Staff pages: signed-in staff only; everyone else is sent to the site's sign-in page
(settings.LOGIN_URL, /accounts/login/), not the admin's, and comes back after signing in."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import user_passes_test


def is_staff(user) -> bool:
    return user.is_active and user.is_staff


def staff_required(view):
    """As Django's staff_member_required, with the site's sign-in page."""
    return user_passes_test(is_staff, login_url=settings.LOGIN_URL)(view)
