"""Short posts that read like posts, in English and Chinese, from written templates.

No network and no model: a template's slots are filled from small lists, so
the same seed gives the same texts. About one post in three is Chinese, so
the search page finds something for 咖啡 or 周末.
"""

# ruff: noqa: RUF001 (Chinese text has its own full-width punctuation)
import random

CHINESE_SHARE = 0.35

_EN_TEMPLATES = (
    "Finally tried the {food} at {place}. {verdict}",
    "{time}, {weather}, and {activity}. {mood}",
    "Hot take: {food} is better {time_short}.",
    "Anyone else {activity} {time_short}? {mood}",
    "Shipped the {work} today. {verdict}",
    "Reading {book} on the {transport}. {mood}",
    "{weather} again. Good day for {activity}.",
    "Note to self: never deploy {time_short}.",
    "Packed at {place} {time_short}. {verdict}",
    "Just {activity} for an hour and feel brand new.",
)
_EN = {
    "food": ("ramen", "sourdough", "iced coffee", "dumplings", "banana bread", "matcha latte"),
    "place": ("the corner cafe", "the night market", "the new bakery", "the riverside park"),
    "verdict": ("Worth the queue.", "Ten out of ten.", "Not sure yet.", "Would go again."),
    "time": ("Monday morning", "Saturday afternoon", "Late night", "Friday evening"),
    "time_short": ("on a Monday", "at midnight", "before coffee", "on weekends"),
    "weather": ("Rain", "Sunshine", "Snow", "Fog over the harbour", "A perfect blue sky"),
    "activity": (
        "walking by the river",
        "cooking for friends",
        "fixing a flaky test",
        "cycling to work",
        "reading in bed",
        "practising guitar",
    ),
    "mood": ("Feeling good.", "Send tea.", "Life is fine.", "Can't complain.", "Back to it."),
    "work": ("release", "new search page", "bug fix", "dark mode", "photo upload"),
    "book": ("a mystery novel", "Dune", "a cookbook", "a poetry collection"),
    "transport": ("train", "ferry", "bus", "night bus"),
}

_ZH_TEMPLATES = (
    "今天{time}去了{place}，{food}真好吃！{mood}",
    "{weather}，适合{activity}。{mood}",
    "终于把{work}上线了，{verdict}",
    "周末打算{activity}，有人一起吗？",
    "在{transport}上看{book}，{mood}",
    "{place}人好多，{verdict}",
    "早上一杯{food}，开始新的一天。",
    "{time}{activity}，感觉{feeling}。",
)
_ZH = {
    "time": ("早上", "中午", "下午", "晚上", "周末"),
    "place": ("咖啡馆", "夜市", "公园", "新开的面包店", "西湖边", "图书馆"),
    "food": ("咖啡", "小笼包", "火锅", "奶茶", "煎饼果子", "拉面"),
    "mood": ("开心！", "太棒了。", "有点累。", "生活真美好。", "继续加油！"),
    "weather": ("今天下雨", "阳光很好", "下雪了", "天气不错", "有点冷"),
    "activity": ("散步", "骑车", "看书", "做饭", "写代码", "爬山", "拍照"),
    "work": ("新版本", "搜索功能", "深色模式", "图片上传"),
    "verdict": ("值得排队。", "下次还来。", "还不错。", "大家辛苦了！"),
    "transport": ("地铁", "高铁", "公交车", "渡轮"),
    "book": ("三体", "小说", "菜谱", "诗集"),
    "feeling": ("很放松", "很充实", "有点困", "特别开心"),
}


def _fill(rng: random.Random, template: str, slots: dict[str, tuple[str, ...]]) -> str:
    return template.format(**{name: rng.choice(words) for name, words in slots.items()})


def post_text(rng: random.Random) -> str:
    """One post: English, or Chinese about a third of the time."""
    if rng.random() < CHINESE_SHARE:
        return _fill(rng, rng.choice(_ZH_TEMPLATES), _ZH)
    return _fill(rng, rng.choice(_EN_TEMPLATES), _EN)


REPLIES = (
    "So true!",
    "Same here 😄",
    "Where is that?",
    "Love this.",
    "Ha, I know the feeling.",
    "Congrats!",
    "同意！",
    "太真实了。",
    "在哪里？求地址。",
    "哈哈哈，我也是。",
)


def reply_text(rng: random.Random) -> str:
    return rng.choice(REPLIES)
