"""The suite's password hasher: Django's PBKDF2 at one iteration instead of a million.

Every test person is made with a password (create_user(..., password="pw")), and Django's default
of 1,000,000 PBKDF2 iterations costs about 0.3-0.6 s of CPU each time: seconds a test, minutes a
run. The hash it makes is an ordinary pbkdf2_sha256 one with its iteration count written in it, so
the live servers and workers a test starts (which keep the default hashers) still check it; a
server that does upgrades it on sign-in, as it would any older hash. Nothing in the suite tests the
cost of a hash.
"""

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class OneIterationPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1
