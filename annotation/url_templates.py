"""URLs the pages fill in themselves (another attempt, a study's report), from reverse() so the
URL patterns stay their one home: `url_template("annotation:play", uid="str")` -> "/play/{uid}/"."""

from django.urls import reverse


def url_template(name: str, **placeholders: str) -> str:
    """The named URL with each keyword ("int" or "str": its converter) left as {keyword}."""
    # One stand-in per placeholder, matching its converter and found nowhere else in a path.
    stand_ins = {
        key: 987654300 + i if converter == "int" else f"zzstandin{i}zz"
        for i, (key, converter) in enumerate(placeholders.items())
    }
    url = reverse(name, kwargs=stand_ins)
    for key, value in stand_ins.items():
        url = url.replace(str(value), "{" + key + "}")
    return url
