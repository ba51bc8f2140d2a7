"""The simulated web grown into an internet (`simweb --internet`): every site is an organisation of a type,
only some types publish events or news, and sites link to each other — partners (mostly of their own type),
blogrolls, directories listing many sites of one type, a few hubs everyone links to (preferential
attachment), and a spam farm whose pages stuff event words and link everywhere.

Domain discovery needs this: the sites of one type are found through each other's links and words, past
shops, blogs and spam that use the same words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Type → (publishes events/news, weight among sites).
ORGANISATIONS: dict[str, tuple[bool, int]] = {
    "museum": (True, 12), "university": (True, 12), "city_hall": (True, 12), "club": (True, 14),
    "shop": (False, 20), "blog": (False, 18), "directory": (False, 4), "spam": (False, 8),
}
PUBLISHING = tuple(kind for kind, (publishes, _) in ORGANISATIONS.items() if publishes)
# The share of a partner link that stays within the site's own type (homophily).
SAME_TYPE_SHARE = 0.7


@dataclass(frozen=True)
class OrganisationWords:
    label: str
    about: str  # one sentence on the homepage, in the site's language
    partners: str  # the heading of its links to other sites


# Per language, per type. Spam stuffs the words that listings use, to draw keyword search and text rankers.
WORDS: dict[str, dict[str, OrganisationWords]] = {
    "en": {
        "museum": OrganisationWords("Museum", "Collections, exhibitions and guided tours of art and history.", "Partner museums"),
        "university": OrganisationWords("University", "Faculties, research, admissions and campus life for students.", "Partner universities"),
        "city_hall": OrganisationWords("City Hall", "Council, municipal services, permits and public notices for residents.", "Neighbouring towns"),
        "club": OrganisationWords("Club", "Members, training, matches and meetups of our association.", "Friendly clubs"),
        "shop": OrganisationWords("Shop", "Buy online: prices, cart, delivery and returns, best deals.", "Our brands"),
        "blog": OrganisationWords("Blog", "My thoughts, travel notes and photos.", "Blogroll"),
        "directory": OrganisationWords("Directory", "A directory of organisations and their websites.", "Listed websites"),
        "spam": OrganisationWords("Best deals", "Events news concert workshop exhibition lecture tickets cheap best price casino bonus click here.", "Top links"),
    },
    "zh-TW": {
        "museum": OrganisationWords("博物館", "典藏、展覽與導覽，認識藝術與歷史。", "合作博物館"),
        "university": OrganisationWords("大學", "學院、研究、招生與校園生活。", "姊妹校"),
        "city_hall": OrganisationWords("市政府", "議會、市政服務、申辦與公告。", "鄰近縣市"),
        "club": OrganisationWords("協會", "會員、練習、比賽與聚會。", "友好社團"),
        "shop": OrganisationWords("商店", "線上購物：價格、購物車、配送與退貨。", "合作品牌"),
        "blog": OrganisationWords("個人部落格", "我的心得、旅行筆記與照片。", "好友連結"),
        "directory": OrganisationWords("網站名錄", "各機關團體與其網站的名錄。", "收錄網站"),
        "spam": OrganisationWords("超值優惠", "活動訊息 最新消息 音樂會 講座 展覽 門票 便宜 優惠 娛樂城 點這裡。", "熱門連結"),
    },
    "zh-CN": {
        "museum": OrganisationWords("博物馆", "馆藏、展览与导览，了解艺术与历史。", "合作博物馆"),
        "university": OrganisationWords("大学", "学院、科研、招生与校园生活。", "合作院校"),
        "city_hall": OrganisationWords("市政府", "人大、政务服务、办事指南与公告。", "周边城市"),
        "club": OrganisationWords("俱乐部", "会员、训练、比赛与聚会。", "友好俱乐部"),
        "shop": OrganisationWords("商城", "在线购物：价格、购物车、配送与退货。", "合作品牌"),
        "blog": OrganisationWords("个人博客", "我的随笔、旅行笔记与照片。", "友情链接"),
        "directory": OrganisationWords("网址导航", "各单位与其网站的导航目录。", "收录网站"),
        "spam": OrganisationWords("特价优惠", "活动 新闻动态 音乐会 讲座 展览 门票 便宜 优惠 娱乐 点击这里。", "热门链接"),
    },
    "ja": {
        "museum": OrganisationWords("美術館", "コレクション、展覧会、ガイドツアーで芸術と歴史を。", "連携美術館"),
        "university": OrganisationWords("大学", "学部、研究、入試、キャンパスライフ。", "協定校"),
        "city_hall": OrganisationWords("市役所", "議会、行政サービス、手続き、お知らせ。", "近隣の市町村"),
        "club": OrganisationWords("クラブ", "会員、練習、試合、交流会。", "友好クラブ"),
        "shop": OrganisationWords("ショップ", "オンライン購入：価格、カート、配送、返品。", "取扱ブランド"),
        "blog": OrganisationWords("ブログ", "日々の思い、旅の記録と写真。", "リンク集"),
        "directory": OrganisationWords("リンク集", "団体とそのウェブサイトの一覧。", "掲載サイト"),
        "spam": OrganisationWords("激安情報", "イベント お知らせ コンサート 講演会 展示会 チケット 激安 カジノ ここをクリック。", "人気リンク"),
    },
    "de": {
        "museum": OrganisationWords("Museum", "Sammlungen, Ausstellungen und Führungen zu Kunst und Geschichte.", "Partnermuseen"),
        "university": OrganisationWords("Universität", "Fakultäten, Forschung, Zulassung und Campusleben.", "Partnerhochschulen"),
        "city_hall": OrganisationWords("Rathaus", "Gemeinderat, Bürgerservice, Anträge und Bekanntmachungen.", "Nachbargemeinden"),
        "club": OrganisationWords("Verein", "Mitglieder, Training, Spiele und Treffen unseres Vereins.", "Befreundete Vereine"),
        "shop": OrganisationWords("Shop", "Online kaufen: Preise, Warenkorb, Versand und Rückgabe.", "Unsere Marken"),
        "blog": OrganisationWords("Blog", "Gedanken, Reisenotizen und Fotos.", "Blogroll"),
        "directory": OrganisationWords("Verzeichnis", "Ein Verzeichnis von Organisationen und ihren Websites.", "Eingetragene Websites"),
        "spam": OrganisationWords("Top Angebote", "Veranstaltungen Aktuelles Konzert Vortrag Ausstellung Tickets billig Casino Bonus hier klicken.", "Top Links"),
    },
    "es": {
        "museum": OrganisationWords("Museo", "Colecciones, exposiciones y visitas guiadas de arte e historia.", "Museos asociados"),
        "university": OrganisationWords("Universidad", "Facultades, investigación, admisiones y vida en el campus.", "Universidades asociadas"),
        "city_hall": OrganisationWords("Ayuntamiento", "Pleno, servicios municipales, trámites y avisos.", "Municipios vecinos"),
        "club": OrganisationWords("Club", "Socios, entrenamientos, partidos y encuentros de la asociación.", "Clubes amigos"),
        "shop": OrganisationWords("Tienda", "Compra en línea: precios, carrito, envío y devoluciones.", "Nuestras marcas"),
        "blog": OrganisationWords("Blog", "Mis ideas, notas de viaje y fotos.", "Blogroll"),
        "directory": OrganisationWords("Directorio", "Un directorio de organizaciones y sus sitios web.", "Sitios listados"),
        "spam": OrganisationWords("Ofertas", "Eventos noticias concierto charla exposición entradas barato casino bono haga clic aquí.", "Enlaces top"),
    },
}


def organisation_of(seed: int, index: int) -> str:
    """Site `index`'s organisation type, drawn from its own stream (the sites' other draws are unchanged)."""
    rng = random.Random(f"{seed}:{index}:organisation")
    kinds = list(ORGANISATIONS)
    return rng.choices(kinds, weights=[ORGANISATIONS[kind][1] for kind in kinds])[0]


def link_graph(organisations: list[str], seed: int) -> list[tuple[int, ...]]:
    """Each site's out-links to other sites (their indices), drawn once for the whole web."""
    rng = random.Random(f"{seed}:links")
    by_type: dict[str, list[int]] = {}
    for index, kind in enumerate(organisations):
        by_type.setdefault(kind, []).append(index)
    honest = [index for index, kind in enumerate(organisations) if kind != "spam"]
    # Preferential attachment: a site already linked to is likelier to be linked again, so a few become hubs.
    in_degree = [0] * len(organisations)

    def pick(pool: list[int], exclude: int) -> int | None:
        choices = [index for index in pool if index != exclude]
        if not choices:
            return None
        return rng.choices(choices, weights=[1 + in_degree[index] for index in choices])[0]

    links: list[tuple[int, ...]] = []
    for index, kind in enumerate(organisations):
        targets: list[int] = []
        if kind == "spam":
            targets = [other for other in by_type["spam"] if other != index]
            targets += rng.sample(honest, min(len(honest), rng.randint(15, 40)))
        elif kind == "directory":
            theme = rng.choice(PUBLISHING)
            for _ in range(rng.randint(20, 60)):
                target = pick(by_type.get(theme, honest) if rng.random() < 0.8 else honest, index)
                if target is not None:
                    targets.append(target)
        else:
            count = rng.randint(3, 8) if kind == "blog" else rng.randint(1, 5)
            for _ in range(count):
                own = by_type[kind] if rng.random() < SAME_TYPE_SHARE else honest
                target = pick(own, index)
                if target is not None:
                    targets.append(target)
            if kind == "blog" and "spam" in by_type and rng.random() < 0.3:  # comment spam left standing
                targets.append(rng.choice(by_type["spam"]))
        unique = tuple(dict.fromkeys(target for target in targets if target != index))
        for target in unique:
            in_degree[target] += 1
        links.append(unique)
    return links
