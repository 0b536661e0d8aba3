"""What every feed parser shares: small pure helpers, one module per concern.

``text`` (HTML to text, slugs), ``values`` (untrusted JSON that never raises), ``times``
(feed times as aware UTC), ``status`` (status and impact words), ``documents`` (decoding and
shape checks), ``syndication`` (RSS/Atom with feedparser, apart so that JSON parsers do not
import it), ``history`` (update histories written into an item's HTML) and ``regions``
(provider region codes from what the hyperscaler feeds say).
"""
