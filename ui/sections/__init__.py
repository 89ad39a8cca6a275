"""Each page's named sections, one module per page: the page script calls them in order.

A section draws one part of a page from a ``ui.page.Page`` (the sidebar's choices and the
prompt's run) and values computed in ``core``; it holds no math of its own beyond formatting.
"""
