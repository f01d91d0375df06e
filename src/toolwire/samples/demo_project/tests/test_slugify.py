import unittest

from textkit import slugify


class SlugifyTest(unittest.TestCase):
    def test_lowercases_words(self) -> None:
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_title_with_accents(self) -> None:
        self.assertEqual(slugify("Crème Brûlée Recipes"), "creme-brulee-recipes")

    def test_keeps_digits(self) -> None:
        self.assertEqual(slugify("top 10 tips"), "top-10-tips")

    def test_custom_separator(self) -> None:
        self.assertEqual(slugify("a b c", separator="_"), "a_b_c")

    def test_max_length_cuts_at_a_word(self) -> None:
        self.assertEqual(slugify("the quick brown fox", max_length=12), "the-quick")

    def test_only_punctuation(self) -> None:
        self.assertEqual(slugify("!!!"), "")


if __name__ == "__main__":
    unittest.main()
