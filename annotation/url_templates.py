"""URLs the pages fill in themselves (another attempt, a study's report), from reverse() so the
URL patterns stay their one home: `url_template("annotation:play", uid=...)` -> "/play/{uid}/"."""

from django.urls import reverse

# Stand-ins that match any URL converter (int and str) and appear nowhere else in a path.
_STAND_INS = {"int": 987654321, "str": "zzstandinzz"}


def url_template(name: str, **placeholders: str) -> str:
    """The named URL with each keyword's value ("int" or "str", its converter) left as {keyword}."""
    stand_ins = {key: _STAND_INS[converter] for key, converter in placeholders.items()}
    url = reverse(name, kwargs=stand_ins)
    for key, value in stand_ins.items():
        url = url.replace(str(value), "{" + key + "}")
    return url
