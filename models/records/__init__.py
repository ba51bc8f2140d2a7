"""Records: a listing page's data region (MDR) turned into records — item link, title, date, snippet — and
their evaluation on labelled data."""
