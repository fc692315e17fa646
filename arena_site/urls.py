from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.decorators.cache import cache_control
from django.views.static import serve

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("annotation.urls")),
    path("", include("puzzles.urls")),
    # Public puzzle images under random names; masks and truth are never files here.
    # Asset files never change (a new image gets a new random name), so browsers may keep them.
    re_path(
        rf"^{settings.MEDIA_URL.strip('/')}/(?P<path>.*)$",
        cache_control(max_age=31536000, immutable=True)(serve),
        {"document_root": settings.MEDIA_ROOT},
    ),
]
