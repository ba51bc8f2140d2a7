"""serve-sites: snapshots on loopback with directory URLs, content types and host rewriting."""

import json

import aiohttp
import pytest

from infra.site_server import SiteServer, find_sites


@pytest.fixture
def snapshot(tmp_path):
    site = tmp_path / "club" / "site"
    (site / "events").mkdir(parents=True)
    (site / "index.html").write_text(
        '<a href="https://club.example/events/">Events</a> <a href="//club.example/x">x</a> '
        '<a href="https://club.example.org/">not ours</a> <p>Write to https://club.example/contact</p>'
        '<a href="about/https://club.example/about">a broken relative link</a>'
        '<script>location.hash = "https://club.example/js"</script>')
    (site / "events" / "index.html").write_text("<h1>Events</h1>")
    (site / "style.css").write_text("body { background: url(https://club.example/bg.png) }")
    (tmp_path / "club" / "manifest.json").write_text(json.dumps(
        {"homepage": "index.html", "serve_prefix": "/club/", "site_hosts": ["club.example"]}))
    (tmp_path / "secret.txt").write_text("outside")
    return tmp_path


async def test_serves_a_snapshot_under_its_prefix_with_links_rewritten(snapshot):
    server = SiteServer(find_sites([snapshot]))
    homepages = await server.start()
    try:
        home = homepages["club"]
        origin = home.removesuffix("/club/")
        assert home.startswith("http://127.0.0.1:") and home.endswith("/club/")
        async with aiohttp.ClientSession() as session:
            async with session.get(home) as response:
                body = await response.text()
                assert response.content_type == "text/html"
            assert f'href="{origin}/events/"' in body and f'href="{origin}/x"' in body
            assert "https://club.example.org/" in body  # another host keeps its link
            # The words the page shows stay as written; its script is markup, rewritten.
            assert "Write to https://club.example/contact" in body and f'"{origin}/js"' in body
            # A host's URL inside a broken relative link is left as a browser resolves it: no port in its path.
            assert 'href="about/https://club.example/about"' in body
            async with session.get(origin + "/club/events", allow_redirects=False) as response:
                assert response.status == 301 and response.headers["Location"] == "/club/events/"
            async with session.get(origin + "/club/style.css") as response:
                assert response.content_type == "text/css" and origin in await response.text()
            for path in ("/club/../secret.txt", "/club/%2e%2e/secret.txt", "/elsewhere/", "/club/missing.html"):
                async with session.get(origin + path) as response:
                    assert response.status == 404, path
    finally:
        await server.stop()


async def test_a_page_reads_the_same_words_on_any_port(snapshot):
    """Two servers of one snapshot (two ports): the pages' links differ, the words they show do not."""
    from models.web.dom import parse_html, text_content

    def shown_words(html: str) -> str:
        root = parse_html(html)
        for script in root.xpath("//script"):
            script.drop_tree()
        return text_content(root)

    servers = [SiteServer(find_sites([snapshot])) for _ in range(2)]
    homes = [(await server.start())["club"] for server in servers]
    try:
        async with aiohttp.ClientSession() as session:
            bodies = []
            for home in homes:
                async with session.get(home) as response:
                    bodies.append(await response.text())
        assert homes[0] != homes[1] and bodies[0] != bodies[1]
        assert shown_words(bodies[0]) == shown_words(bodies[1])
        assert "https://club.example/contact" in shown_words(bodies[0])
    finally:
        for server in servers:
            await server.stop()


def test_a_plain_folder_of_html_is_a_site(tmp_path):
    (tmp_path / "index.html").write_text("<p>hi</p>")
    [site] = find_sites([tmp_path])
    assert site.prefix == "/" and site.root == tmp_path
