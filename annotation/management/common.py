"""What several management commands share: finding the study a command names."""

from django.core.management.base import CommandError

from annotation.models import Study


def find_study(ref: str) -> Study:
    """The one study with this id, name or token; a CommandError when none or several match."""
    query = Study.objects.filter(pk=int(ref)) if ref.isdigit() else Study.objects.filter(name=ref)
    found = list(query[:2]) or list(Study.objects.filter(token=ref))
    if len(found) != 1:
        raise CommandError(f"no single study named or numbered {ref!r}")
    return found[0]
