"""HTML of the simulated web: six templates (tag structures and class names), five menu styles,
six pagination styles. Pure functions of a site spec, a page and the visible items."""

from __future__ import annotations

from datetime import datetime, timedelta
from html import escape

from infra.simweb.generator import Item, SiteSpec, SourceSpec
from infra.simweb.internet import WORDS, OrganisationWords

# (opening, one item, closing) of a listing, per template.
LISTINGS = {
    "bootstrap": ('<ul class="list-group">',
                  '<li class="list-group-item"><a href="{url}">{title}</a> <span class="badge date">{date}</span>'
                  " <small>{place}</small></li>", "</ul>"),
    "table": ('<table class="listing"><tbody>',
              '<tr><td class="date">{date}</td><td class="title"><a href="{url}">{title}</a></td><td>{place}</td></tr>',
              "</tbody></table>"),
    "cards": ('<div class="grid">',
              '<article class="card"><h3 class="card-title"><a href="{url}">{title}</a></h3><time>{date}</time>'
              "<p>{place}</p></article>", "</div>"),
    "definition": ('<dl class="entries">', '<dt>{date}</dt><dd><a href="{url}">{title}</a> — {place}</dd>', "</dl>"),
    "wordpress": ('<div id="content">',
                  '<div class="post hentry"><h2 class="entry-title"><a href="{url}" rel="bookmark">{title}</a></h2>'
                  '<div class="entry-meta">{date} · {place}</div><div class="entry-summary">{snippet}</div></div>',
                  "</div>"),
    "plain": ("<ul>", '<li>{date} <a href="{url}">{title}</a> ({place})</li>', "</ul>"),
}

# Page shells per template: {nav} goes where the menu style puts it; {footer_nav} for footer-only menus.
SHELLS = {
    "bootstrap": '<div class="container"><header class="navbar">{nav}</header><div class="row">{side}'
                 '<main class="col-md-9"><h1>{title}</h1>{body}</main></div>'
                 '<footer class="footer">{footer_nav}<p>© {site}</p></footer></div>',
    "table": '<table width="100%"><tr><td colspan="2">{nav}</td></tr><tr><td valign="top">{side}</td>'
             '<td><h2>{title}</h2>{body}</td></tr><tr><td colspan="2">{footer_nav}© {site}</td></tr></table>',
    "cards": '<header class="site-header">{nav}</header><div class="layout">{side}<section class="main">'
             '<h1 class="page-title">{title}</h1>{body}</section></div><footer>{footer_nav}<small>{site}</small></footer>',
    "definition": '<div id="wrap"><div id="top">{nav}</div>{side}<div id="main"><h1>{title}</h1>{body}</div>'
                  '<div id="bottom">{footer_nav}{site}</div></div>',
    "wordpress": '<div id="page" class="site"><header id="masthead">{nav}</header><div id="primary">{side}'
                 '<h1 class="entry-title">{title}</h1>{body}</div><footer id="colophon">{footer_nav}{site}</footer></div>',
    "plain": "{nav}{side}<h1>{title}</h1>{body}<hr>{footer_nav}<p>{site}</p>",
}


def sim_time(start: datetime, hours: float) -> datetime:
    return start + timedelta(hours=hours)


def menu(site: SiteSpec, entries: list[tuple[str, str]]) -> dict[str, str]:
    """The menu in the site's style: {'nav': …, 'side': …, 'footer_nav': …}."""
    links = "".join(f'<li><a href="{escape(url)}">{escape(label)}</a></li>' for label, url in entries)
    inline = " | ".join(f'<a href="{escape(url)}">{escape(label)}</a>' for label, url in entries)
    style = site.nav_style
    if style == "top":
        return {"nav": f'<nav class="top-nav"><ul>{links}</ul></nav>', "side": "", "footer_nav": ""}
    if style == "sidebar":
        return {"nav": "", "side": f'<aside class="sidebar"><ul class="menu">{links}</ul></aside>', "footer_nav": ""}
    if style == "footer":
        return {"nav": "", "side": "", "footer_nav": f'<p class="footer-links">{inline}</p>'}
    if style == "dropdown":
        first, rest = entries[0], entries[1:]
        sub = "".join(f'<li><a href="{escape(url)}">{escape(label)}</a></li>' for label, url in rest)
        return {"nav": f'<nav><ul class="dropdown"><li><a href="{escape(first[1])}">{escape(first[0])}</a></li>'
                       f'<li class="has-sub"><a href="#">☰</a><ul class="sub-menu">{sub}</ul></li></ul></nav>',
                "side": "", "footer_nav": ""}
    columns = [entries[i:i + 3] for i in range(0, len(entries), 3)]
    mega = "".join(
        '<div class="mega-col">' + "".join(f'<a href="{escape(u)}">{escape(label)}</a>' for label, u in column)
        + "</div>" for column in columns)
    return {"nav": f'<nav class="mega-menu">{mega}</nav>', "side": "", "footer_nav": ""}


def document(site: SiteSpec, title: str, body: str, entries: list[tuple[str, str]]) -> str:
    parts = menu(site, entries)
    # An organisation names itself by its type on every page ("Events — Museum site-0004").
    name = f"{organisation_words(site).label} {site.name}" if site.organisation else site.name
    shell = SHELLS[site.template].format(title=escape(title), body=body, site=escape(name), **parts)
    return (f'<!DOCTYPE html><html lang="{site.lang}"><head><meta charset="utf-8"><title>{escape(title)} — '
            f"{escape(name)}</title></head><body>{shell}</body></html>")


def page_url(source: SourceSpec, number: int, size: int | None = None) -> str:
    """The URL path (with query) of listing page `number` (1-based) in the source's pagination style;
    a page size other than the source's own (page_size style) is carried along."""
    if size not in (None, source.page_size):
        return f"{source.path}?size={size}" + (f"&page={number}" if number > 1 else "")
    if number == 1 and source.pagination != "load_more":
        return source.path
    style = source.pagination
    if style == "numbered_path":
        return f"{source.path}page/{number}/"
    if style == "next_only":
        return f"{source.path}?p={number}"
    if style == "load_more":
        return source.path if number == 1 else f"{source.path}?offset={(number - 1) * source.page_size}"
    return f"{source.path}?page={number}"


def pagination(site: SiteSpec, source: SourceSpec, number: int, pages: int, size: int) -> str:
    if pages <= 1:
        return ""
    words = site.words
    style = source.pagination
    nxt = page_url(source, number + 1, size) if number < pages else None
    prev = page_url(source, number - 1, size) if number > 1 else None
    if style == "next_only":
        links = (f'<a class="prev" href="{prev}">« {words.previous}</a> ' if prev else "") + (
            f'<a class="next" href="{nxt}">{words.next} »</a>' if nxt else "")
        return f'<div class="pager">{links}</div>'
    if style == "load_more":
        return f'<div class="more"><a class="load-more button" href="{nxt}">{words.load_more}</a></div>' if nxt else ""
    if style == "hashed":
        numbers = "".join(
            f'<li><a href="#page-{n}" data-href="{page_url(source, n)}" onclick="return goPage(this)">{n}</a></li>'
            for n in range(1, pages + 1))
        button = f'<button class="next" data-href="{nxt}" onclick="goPage(this)">{words.next}</button>' if nxt else ""
        return f'<ul class="pages">{numbers}</ul>{button}'
    numbers = "".join(
        f'<span class="current">{n}</span>' if n == number else f'<a href="{page_url(source, n, size)}">{n}</a>'
        for n in range(1, pages + 1))
    html = (f'<div class="pagination">{f"<a class=prev href={prev}>‹</a>" if prev else ""}{numbers}'
            f'{f"<a class=next href={nxt}>{words.next} ›</a>" if nxt else ""}</div>')
    if style == "page_size":
        sizes = " ".join(f'<a href="{source.path}?size={size}">{size}</a>' for size in (10, 20, 50))
        html += f'<div class="page-size">{sizes} {words.per_page}</div>'
    return html


def item_path(source: SourceSpec, item: Item) -> str:
    return f"{source.path}item-{item.number}.html"


def listing(site: SiteSpec, source: SourceSpec, items: list[Item], number: int, pages: int, size: int,
            start: datetime) -> str:
    opening, row, closing = LISTINGS[site.template]
    words = site.words
    rows = "".join(
        row.format(url=escape(item_path(source, item)), title=escape(item.title), place=escape(item.place),
                   date=sim_time(start, item.hours).strftime(words.date_format), snippet=escape(words.body[:40]))
        for item in items)
    return opening + rows + closing + pagination(site, source, number, pages, size)


def detail(site: SiteSpec, source: SourceSpec, item: Item, start: datetime) -> str:
    words = site.words
    when = sim_time(start, item.hours).strftime(words.date_format + " %H:%M")
    return (f'<article class="detail"><p class="when">{when}</p><p class="where">{escape(item.place)}</p>'
            f'<p>{escape(words.body)}</p><a href="{source.path}">{escape(getattr(words, source.kind))}</a></article>')


def organisation_words(site: SiteSpec) -> OrganisationWords:
    return WORDS[site.lang][site.organisation]


def organisation_home(site: SiteSpec, linked: list[tuple[SiteSpec, str]]) -> str:
    """An organisation's homepage body: what it is, and its links to other sites. A spam page repeats its
    stuffed words."""
    words = organisation_words(site)
    about = escape(words.about)
    body = f'<p class="about">{about}</p>' + (f"<p>{about}</p>" * 4 if site.organisation == "spam" else
                                              f"<p>{escape(site.words.body)}</p>")
    return body + partners(site, linked)


def partners(site: SiteSpec, linked: list[tuple[SiteSpec, str]]) -> str:
    """The block of an organisation's links to other sites: each one's homepage, and for every other partner
    that publishes, its first source page too ("their events")."""
    if not linked:
        return ""
    words = organisation_words(site)
    entries = []
    for number, (other, origin) in enumerate(linked):
        name = f"{escape(organisation_words(other).label)} {escape(other.name)}"
        entry = f'<a href="{origin}/">{name}</a>'
        if other.sources and number % 2 == 0:
            first = other.sources[0]
            entry += f' · <a href="{origin}{first.path}">{escape(getattr(site.words, first.kind))}</a>'
        entries.append(f"<li>{entry}</li>")
    return f'<aside class="partners"><h2>{escape(words.partners)}</h2><ul>{"".join(entries)}</ul></aside>'
