#!/usr/bin/env python3
"""Checks that every internal link and image of a generated HTML site
resolves: each href/src that is not an external URL must name a file that
exists under the site, and a #fragment must name an id (or a name) in it.

Usage: check_links.py SITE_DIR   (the html/ directory Doxygen writes)

Prints one line per broken reference, "page: attribute -> target (why)",
and exits 1 if there is any; prints a summary and exits 0 otherwise.
External links (http:, https:, mailto:, javascript:) are not fetched: the
site must work offline, and CI has no network.
"""
import html.parser
import os
import sys
import urllib.parse

EXTERNAL = ("http:", "https:", "mailto:", "javascript:", "data:", "ftp:")
ATTRS = {"a": "href", "link": "href", "img": "src", "script": "src",
         "iframe": "src", "object": "data", "area": "href", "source": "src"}


class Page(html.parser.HTMLParser):
    """The references a page makes and the anchors it offers."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs = []      # (attribute, target)
        self.anchors = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.anchors.add(a[key])
        want = ATTRS.get(tag)
        if want and a.get(want):
            self.refs.append((f"{tag}[{want}]", a[want]))


def parse(path, cache):
    if path not in cache:
        p = Page()
        with open(path, encoding="utf-8", errors="replace") as f:
            p.feed(f.read())
        cache[path] = p
    return cache[path]


def check(site):
    site = os.path.abspath(site)
    cache, broken, checked = {}, [], 0
    pages = sorted(os.path.join(d, f) for d, _, fs in os.walk(site)
                   for f in fs if f.endswith(".html"))
    if not pages:
        return [f"{site}: no HTML pages"], 0
    for page in pages:
        for attr, target in parse(page, cache).refs:
            target = target.strip()
            if not target or target.lower().startswith(EXTERNAL):
                continue
            checked += 1
            url = urllib.parse.urlsplit(target)
            path = urllib.parse.unquote(url.path)
            dest = page if not path else os.path.normpath(
                os.path.join(os.path.dirname(page), path))
            where = os.path.relpath(page, site)
            if not dest.startswith(site + os.sep) and dest != site:
                broken.append(f"{where}: {attr} -> {target} (outside the site)")
            elif not os.path.exists(dest):
                broken.append(f"{where}: {attr} -> {target} (no such file)")
            elif url.fragment and dest.endswith(".html") and \
                    urllib.parse.unquote(url.fragment) not in \
                    parse(dest, cache).anchors:
                broken.append(f"{where}: {attr} -> {target} (no such anchor)")
    return broken, checked


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_links.py SITE_DIR")
    broken, checked = check(sys.argv[1])
    for line in broken:
        print(line)
    if broken:
        print(f"check_links: {len(broken)} broken of {checked} internal "
              "references", file=sys.stderr)
        sys.exit(1)
    print(f"check_links: all {checked} internal links and images resolve")


if __name__ == "__main__":
    main()
