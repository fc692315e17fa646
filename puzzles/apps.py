from django.apps import AppConfig


class PuzzlesConfig(AppConfig):
    name = "puzzles"
    verbose_name = "Puzzle bank"

    def ready(self) -> None:
        from PIL import Image

        from puzzles.contained import IMAGE_MAX_PIXELS

        # Pillow's own bomb check at our cap, for every image this process (and the workers it
        # forks) opens, not only those the importers read through contained.read_image: Pillow
        # warns past the cap and refuses past twice it (its default, 89 Mpx, let a 92 Mpx
        # file through with a warning).
        Image.MAX_IMAGE_PIXELS = IMAGE_MAX_PIXELS
