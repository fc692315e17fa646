"""People, attempts and events arrive with the live page; see the issues."""
