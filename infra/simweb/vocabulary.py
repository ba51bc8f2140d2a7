"""Words of the simulated web, per language: menu labels (true and misleading) and item text."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Vocabulary:
    lang: str
    home: str
    about: str
    contact: str
    staff: str
    products: str
    services: str
    blog: str
    events: str
    news: str
    # Labels that look like a listing but are not one (a venue-rental page, an old archive, a gallery).
    misleading: tuple[str, ...]
    more: str
    next: str
    previous: str
    load_more: str
    per_page: str
    title_words: tuple[str, ...]
    places: tuple[str, ...]
    body: str
    date_format: str  # strftime pattern of dates shown in listings


VOCABULARIES: dict[str, Vocabulary] = {
    v.lang: v
    for v in (
        Vocabulary(
            "en", "Home", "About us", "Contact", "Our team", "Products", "Services", "Blog", "Events", "News",
            ("Event venues for hire", "News archive 2009", "Photo gallery"), "Read more", "Next", "Previous",
            "Load more", "per page",
            ("Workshop", "Open day", "Lecture", "Community meeting", "Concert", "Volunteer day", "Exhibition",
             "Annual report", "Board election", "Summer camp", "Hackathon", "Fundraiser"),
            ("Main hall", "City library", "Room 204", "Online", "Riverside park"),
            "Join us for this session. Registration is free and open to everyone.", "%d %b %Y",
        ),
        Vocabulary(
            "zh-TW", "首頁", "關於我們", "聯絡我們", "成員介紹", "產品介紹", "服務項目", "部落格", "活動訊息", "最新消息",
            ("活動場地租借", "舊聞存檔", "相簿"), "詳細內容", "下一頁", "上一頁", "載入更多", "每頁筆數",
            ("市民講座", "親子活動", "志工招募", "音樂會", "社區說明會", "研習營", "成果展", "公告", "徵才", "校友回娘家"),
            ("市府大禮堂", "文化中心", "第二會議室", "線上", "河濱公園"),
            "歡迎踴躍報名參加，名額有限，額滿為止。", "%Y年%m月%d日",
        ),
        Vocabulary(
            "zh-CN", "首页", "关于我们", "联系我们", "团队成员", "产品中心", "服务项目", "博客", "活动", "新闻动态",
            ("场地租赁", "历史新闻", "图片集"), "查看详情", "下一页", "上一页", "加载更多", "每页条数",
            ("学术讲座", "开放日", "志愿者活动", "音乐会", "社区会议", "培训班", "展览", "通知公告", "招聘", "校友活动"),
            ("报告厅", "图书馆", "第三会议室", "线上", "滨江公园"),
            "欢迎报名参加，名额有限，先到先得。", "%Y-%m-%d",
        ),
        Vocabulary(
            "ja", "ホーム", "私たちについて", "お問い合わせ", "スタッフ紹介", "製品情報", "サービス", "ブログ", "イベント", "お知らせ",
            ("会場レンタル", "過去のニュース", "フォトギャラリー"), "続きを読む", "次へ", "前へ", "もっと見る", "件表示",
            ("勉強会", "オープンキャンパス", "講演会", "交流会", "コンサート", "ボランティア", "展示会", "説明会", "募集", "ワークショップ"),
            ("本館ホール", "市立図書館", "第2会議室", "オンライン", "中央公園"),
            "どなたでも参加できます。事前登録をお願いします。", "%Y年%m月%d日",
        ),
        Vocabulary(
            "de", "Startseite", "Über uns", "Kontakt", "Team", "Produkte", "Leistungen", "Blog", "Veranstaltungen",
            "Aktuelles", ("Räume mieten", "Archiv 2009", "Bildergalerie"), "Weiterlesen", "Weiter", "Zurück",
            "Mehr laden", "pro Seite",
            ("Vortrag", "Tag der offenen Tür", "Workshop", "Mitgliederversammlung", "Konzert", "Stammtisch",
             "Ausstellung", "Jahresbericht", "Sommerfest", "Training"),
            ("Großer Saal", "Stadtbibliothek", "Raum 204", "Online", "Stadtpark"),
            "Alle sind herzlich willkommen. Die Teilnahme ist kostenlos.", "%d.%m.%Y",
        ),
        Vocabulary(
            "es", "Inicio", "Quiénes somos", "Contacto", "Equipo", "Productos", "Servicios", "Blog", "Eventos",
            "Noticias", ("Alquiler de salas", "Archivo 2009", "Galería"), "Leer más", "Siguiente", "Anterior",
            "Cargar más", "por página",
            ("Charla", "Jornada de puertas abiertas", "Taller", "Asamblea", "Concierto", "Voluntariado",
             "Exposición", "Memoria anual", "Campamento", "Hackatón"),
            ("Salón principal", "Biblioteca municipal", "Sala 204", "En línea", "Parque del río"),
            "Te esperamos. La inscripción es gratuita y abierta a todos.", "%d/%m/%Y",
        ),
    )
}
