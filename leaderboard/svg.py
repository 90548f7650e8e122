"""SVG that draws under a strict Content Security Policy: no ``<style>`` element, no ``style=``.

Matplotlib writes every colour and stroke as a CSS ``style="fill: ...; stroke: ..."`` attribute and
puts one rule (``*{stroke-linejoin: round; stroke-linecap: butt}``) in a ``<style>`` element. A page
whose policy is ``style-src 'self'`` (the hub server's) refuses both, and the plot is drawn in black
fill with no strokes. :func:`presentation_attributes` rewrites each declaration as the SVG
presentation attribute of the same name (``fill="#ffffff"``), which no policy governs, and moves the
``<style>`` rule's inherited properties onto the root ``<svg>`` element. The picture is unchanged.
"""

from __future__ import annotations

import html
import re

__all__ = ["presentation_attributes"]

_STYLE_ATTR = re.compile(r'\sstyle="([^"]*)"')
_STYLE_ELEMENT = re.compile(r"<style[^>]*>(.*?)</style>", re.S)
_UNIVERSAL_RULE = re.compile(r"\*\s*\{([^}]*)\}")
_PROPERTY = re.compile(r"^[a-z][a-z-]*$")


def _attributes(declarations: str) -> str:
    """``"fill: #fff; stroke-width: 0.8"`` -> ``' fill="#fff" stroke-width="0.8"'``."""
    out = []
    for decl in html.unescape(declarations).split(";"):
        name, sep, value = decl.partition(":")
        name, value = name.strip().lower(), value.strip()
        if sep and _PROPERTY.match(name) and value:
            out.append(f' {name}="{html.escape(value, quote=True)}"')
    return "".join(out)


def presentation_attributes(svg: str) -> str:
    """``svg`` with every ``style`` attribute and ``<style>`` element turned into presentation
    attributes (see the module doc); the root ``<svg>`` gets the universal rule's properties."""
    root_attrs = ""
    for block in _STYLE_ELEMENT.findall(svg):
        for rule in _UNIVERSAL_RULE.findall(block):
            root_attrs += _attributes(rule)
    text = _STYLE_ELEMENT.sub("", svg)
    text = _STYLE_ATTR.sub(lambda m: _attributes(m.group(1)), text)
    if root_attrs:
        text = re.sub(r"<svg\b", lambda m: m.group(0) + root_attrs, text, count=1)
    return text
