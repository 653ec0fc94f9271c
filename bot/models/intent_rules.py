"""The few rules the offline router keeps because they must never be wrong, and the words that
pick a quick reply's template.

The learned classifier (``bot.models.router``) decides everything else. These rules come
first (``bot.models.offline.classify_offline``):

- a message that says it is *not* urgent ("not urgent", "no rush", "kein Stress", "sin
  prisa", …) is never routed as urgent;
- a message that says it *is* urgent ("urgent", "ASAP", "emergency", "dringend", "urgence",
  …) is urgent, unless it only talks about urgency ("the emergency number", "is it urgent
  …?", "mark it as urgent") or the learned classifier is all but sure it can wait (see
  ``bot.models.offline.classify_offline``);
- a message of emoji or emoticons only (👍, 🙏, ":)", "<3") is social;
- "remember that …", "note that …", "remind me …" (not a question) is a task: the agent
  saves the note or sets the reminder, which a quick reply would silently not do.

Patterns run on the folded text (``bot.models.router.fold``: lower case, no accents).
"""

from __future__ import annotations

import re

from bot.models.router import fold, is_emoji

_NOT = r"(?:not|no|nicht|kein|pas|no es|non e|nao e|niet|geen|nie)"
NOT_URGENT = re.compile(
    rf"\b{_NOT}\s+(?:so\s+|really\s+|very\s+|super\s+|sehr\s+|tres\s+|muy\s+|molto\s+)?"
    r"(?:urgen\w*|dringend\w*|emergen\w*|eilig|akut\w*)"
    r"|\bno (?:rush|hurry|need to hurry)\b|\bkein(?:en)? stress\b|\bkeine eile\b"
    r"|\brien ne presse\b|\bsin prisa\b|\bnessuna fretta\b|\bsem pressa\b|\bgeen haast\b"
    r"|\bnothing (?:too |very |really |that )?urgent\b|\bnon[- ]?(?:urgen|emergen)\w*"
    r"|\bnie (?:jest )?piln\w*|\bnic pilnego\b|\bbez pospiechu\b|\bне (?:срочно|терміново)"
    r"|\binte (?:akut|bradskande)\b|\bikke akut\b|\bei (?:ole )?kiire|\bacil degil"
    # said in other words and languages (each checked on rows written apart: docs/router.md)
    r"|\bnot (?:an?|so|really|very|super|that|too)?\s*(?:urgen\w*|emergen\w*)"
    r"|\bkein(?:en)? notfall|\bpas (?:une )?urgen|\bsin urgencia|\bno es (?:una )?emergencia"
    r"|\bnessuna urgenza|\bnon (?:e )?(?:un'?)?emergenza|\bsem urgencia"
    r"|\bnao e (?:uma )?emergencia|\bgeen (?:spoed|noodgeval)|\bniet dringend"
    r"|\bnem (?:surgos|sietos)|\bnu (?:e|este) urgent"
    r"|\bei (?:ole )?(?:kiireellinen|hata)|\bikke (?:haster|noget hast)|\binte brattom"
    r"|\bnic naleh|\bnie ma pospiechu|\bacele(?:si)? yok|\bkhong (?:gap|khan cap)"
    r"|\btidak (?:mendesak|buru)|\bgak (?:buru|urgent)"
    # other scripts, folded as the text is (fold drops Japanese voicing marks and Hindi
    # vowel signs, and splits Korean syllables into letters)
    + "|" + "|".join(re.escape(fold(phrase)) for phrase in (
        "не горит", "не поспіша", "δεν είναι επείγ", "δεν επείγ", "急ぎではな", "急ぎじゃな",
        "緊急ではな", "緊急じゃな", "至急ではな", "至急じゃな", "急ぎではありません", "不着急",
        "不急", "不是很急", "不是急", "不是紧急", "급하지 않", "급한 건 아니", "급한 거 아니",
        "급한 일 아니", "ไม่รีบ", "ไม่ด่วน", "जल्दी नहीं", "ليس عاجلا", "ليس مستعجلا",
        "ليس طارئا", "مش مستعجل", "לא דחוף", "عجله ای نیست", "فوری نیست")))
URGENT_WORDS = re.compile(
    r"\b(?:urgen\w*|asap|a\.s\.a\.p|emergen\w*|sos|dringend\w*|notfall\w*|spoed\w*|"
    r"noodgeval\w*|piln(?:e|ie|y|a)|srochn\w*|срочн\w*|терміново|экстренн\w*|akut\w*|acil|"
    r"kiireellinen|kiireesti|surgos|επειγ\w*|nalehav\w*|nodfall\w*)\b"
    # scripts without spaces between words have no word edges to match
    r"|緊急|至急|紧急|" + fold("긴급") + "|عاجل")  # folded as the text is (Hangul splits)
# The words, but about urgency rather than an emergency: the learned router decides these.
ABOUT_URGENCY = re.compile(
    r"\bemergenc\w* (?:number|contact|exit|kit|bag|plan|services? number|plumber|line|fund|"
    r"light|brake|procedure|drill)s?\b"
    r"|\bnotfall(?:nummer|kontakt|plan|apotheke|koffer|ausgang|dienst)\w*"
    r"|\bnumero (?:d'|de |di )?(?:urgence|emergencias?|emergenza)"
    r"|^\W*(?:is (?:it|this|that)|ist (?:es|das)|est-ce|c'est|es|e|is het)\s+"
    r"(?:urgen\w*|dringend)\b.*\?"
    r"|\bhow urgent\b|\bwie dringend\b|\burgent care\b|\bin case of (?:an? )?emergenc"
    r"|\b(?:as|als|comme|como|come) (?:urgent|dringend|urgente)\b"
    r"|\burgent (?:flag|label|tag|notifications?|folder)\b"
    r"|\b(?:uscita|salida|saida|porta|puerta|scala|escalera) de?i? ?emergen\w*")
SAVE_OR_REMIND = re.compile(
    r"^\W*(?:(?:please|pls|plz|bitte|stp|por favor|per favore)\W+)?"
    r"(?:remember|note(?: that| down)?|remind me|save (?:this|a note)|erinnere? mich|"
    r"merk dir|notiere|rappelle-moi|note que|recuerdame|apunta|ricordami|segna|lembra-me|"
    r"me lembra|anota|herinner me|noteer)\b")
EMOTICON = re.compile(r"(?:[:;=8][-'^]?[()\[\]dDpP3/\\|*oOxX]+|<3+|\^_?\^|[xX]D+|:'\(|o_o)")

# Words that pick a quick reply's template, strongest first (thanks over goodbye over
# greeting); anything else social gets the acknowledgement.
SOCIAL_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("thanks", re.compile(
        r"\b(?:thanks?|thank (?:you|u)|thx|thnx|thnks|ty|tysm|tyvm|cheers|ta|appreciated?|"
        r"danke\w*|dank(?: je| u)?|merci|gracias|grazie|obrigad[oa]|valeu|bedankt|dankjewel|"
        r"tack|takk|tak|kiitos|dzieki\w*|dziekuje|tesekkur\w*|спасибо|дякую|ευχαριστω)\b|"
        r"ありがとう|谢谢|شكرا|🙏")),
    ("goodbye", re.compile(
        r"\b(?:bye+|goodbye|good ?night|night|nite|see (?:you|ya|u)|cya|later|laters|ttyl|"
        r"take care|tschu(?:s|ss)|bis (?:spater|bald|morgen|dann|gleich)|gute nacht|"
        r"au revoir|a plus|a (?:bientot|demain)|bonne nuit|adios|hasta|nos vemos|"
        r"buenas noches|arrivederci|a (?:dopo|domani|presto)|buonanotte|ci sentiamo|tchau|"
        r"ate (?:logo|amanha|mais)|boa noite|tot (?:ziens|straks|morgen|later)|doei|"
        r"welterusten|ha det|na razie)\b")),
    ("greeting", re.compile(
        r"\b(?:hi+|hello+|hey+|hiya|heya|howdy|yo|sup|gm|g'day|good (?:morning|afternoon|"
        r"evening|day)|morning|mornin|hallo|moin|servus|gruss gott|guten (?:morgen|tag|abend)|"
        r"bonjour|bonsoir|salut|coucou|hola|buen(?:os)? dias|buenas(?: tardes)?|ciao|"
        r"buongiorno|buonasera|salve|ola|oi|bom dia|boa tarde|hoi|goede(?:morgen|middag|"
        r"navond)|hej|czesc|dzien dobry|merhaba|привет|how are (?:you|u)|how's it going|"
        r"wie geht'?s|ca va|que tal|come (?:va|stai)|tudo bem|hoe gaat het)\b|"
        r"こんにちは|你好|👋")),
)
# A question about the assistant itself ("what can you do?", "who are you?").
ABOUT_THE_ASSISTANT = re.compile(
    r"\bwhat (?:else )?(?:can|could|do) (?:you|u) (?:do|offer|help with)\b"
    r"|\bwhat (?:are|r) (?:you|u)(?: for)?\W*$|\bwho (?:are|r) (?:you|u)\b"
    r"|\bare (?:you|u) (?:a |an )?(?:bot|robot|human|real|person|ai|machine)\b"
    r"|\bhow (?:does|do) (?:this|it|you) (?:work|help)\b|\bhow can (?:you|u) help\b"
    r"|\bwhat commands\b|^\s*(?:help|hilfe|aide|ayuda|aiuto|ajuda)\s*\??\s*$"
    r"|\bcan (?:you|u) help(?: me)?(?: with something| out)?\W*$"
    r"|\bwas kannst du\b|\bwer bist du\b|\bbist du ein (?:bot|mensch)\b"
    r"|\bwie funktionierst du\b|\b(?:que|qu'est-ce que) (?:tu )?(?:peux|sais)[- ]?(?:tu )?"
    r"faire\b|\btu (?:peux|sais) faire quoi\b|\bqui es-tu\b|\bque puedes hacer\b"
    r"|\bquien eres\b|\beres un bot\b|\bcosa (?:sai|puoi) fare\b|\bchi sei\b"
    r"|\bo que (?:voce|tu) (?:pode|sabe) fazer\b|\bquem e voce\b|\bwat kun je\b"
    r"|\bwie ben je\b")


def says_not_urgent(text: str) -> bool:
    """The message says it is not urgent ("not urgent", "no rush", "keine Eile", …)."""
    return NOT_URGENT.search(fold(text)) is not None


def says_urgent(text: str) -> bool:
    """The message says it is urgent in so many words, and not only about urgency."""
    folded = fold(text)
    return (URGENT_WORDS.search(folded) is not None and ABOUT_URGENCY.search(folded) is None
            and NOT_URGENT.search(folded) is None)


def is_emoji_only(text: str) -> bool:
    """Emoji, emoticons, punctuation and spaces only, with at least one emoji or emoticon
    (a sticker arrives as its emoji): 👍, 🙏🙏, ":)", "<3". A lone "?" is not."""
    rest = EMOTICON.sub(" ", text)
    if rest != text and not any(char.isalnum() for char in rest):
        return True
    has_emoji = any(is_emoji(char) for char in text)
    return has_emoji and not any(char.isalnum() for char in text)


def asks_to_save_or_remind(text: str) -> bool:
    """"Remember that …", "note that …", "remind me …" and their kin, not as a question."""
    return (SAVE_OR_REMIND.search(fold(text)) is not None
            and not text.rstrip().endswith("?"))


def social_kind(text: str) -> str:
    """The quick reply's template: "thanks", "goodbye", "greeting", else "ack"."""
    folded = fold(text)
    for kind, pattern in SOCIAL_KINDS:
        if pattern.search(folded):
            return kind
    return "ack"


def asks_about_the_assistant(text: str) -> bool:
    """A question about the assistant itself: what it can do, who or what it is."""
    return ABOUT_THE_ASSISTANT.search(fold(text).strip()) is not None
