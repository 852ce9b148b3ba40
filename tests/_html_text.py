"""Text of an HTML page split by where it sits, read with the standard library's parser (independent of
the lxml parser the html compressor uses): shared by the html retention tests."""
from html.parser import HTMLParser

HIDDEN = {'script', 'style', 'nav'}


class Chunks(HTMLParser):
    "Text chunks inside script/style/nav elements (`hidden`) vs. everywhere else (`visible`), whitespace folded."
    VOID = {'br', 'img', 'input', 'meta', 'link', 'hr', 'wbr', 'source', 'area', 'col', 'embed', 'param', 'track', 'base'}
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.hidden, self.visible = [], [], []
    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID: self.stack.append(tag)
    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack.pop() != tag: pass
    def handle_data(self, data):
        t = ' '.join(data.split())
        if t: (self.hidden if HIDDEN & set(self.stack) else self.visible).append(t)


def hidden_only_text(page: str, min_len: int = 8) -> list[str]:
    "Chunks of at least `min_len` characters that appear only inside script/style/nav elements of `page`."
    c = Chunks(); c.feed(page)
    visible = ' '.join(c.visible)
    return [t for t in c.hidden if len(t) >= min_len and t not in visible]
