"""The former intent rules' pattern tables: what ``bench/legacy_intent_rules.py`` applies.

Each table is read top to bottom by ``intent_of`` there: ``CALM`` and ``URGENT`` for
urgency, ``SOCIAL`` (with ``FILLER`` and ``NAME`` between its phrases) for a social message,
``QUESTION`` at a sentence's start for a question. Patterns are written for the folded text
(lower case, accents dropped); kept only for comparison in bench/triage_eval.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator


class Rule:
    """A pattern compiled on its first use: compiling all the tables takes tens of
    milliseconds, which a start that has served no message yet should not pay."""

    __slots__ = ("_compiled", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text)

    def match(self, text: str, position: int = 0) -> re.Match[str] | None:
        return self.pattern.match(text, position)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.pattern.finditer(text)

    def sub(self, replacement: str, text: str) -> str:
        return self.pattern.sub(replacement, text)


def _rx(*alternatives: str) -> Rule:
    """One pattern from alternatives, each matched on word boundaries."""
    return Rule(r"\b(?:" + "|".join(alternatives) + r")\b")


def _phrases(*alternatives: str) -> tuple[Rule, ...]:
    """One pattern per phrase, so that the scanner can take the longest that fits."""
    return tuple(Rule(rf"\b(?:{phrase})\b") for phrase in alternatives)


# Not an emergency, even though it uses the words: then no URGENT row applies.
CALM: tuple[Rule, ...] = (
    # said not to be urgent
    _rx(r"(?:not|no|nicht|kein|pas|no es|non e|nao e|niet|geen)\s+(?:so\s+|really\s+|sehr\s+)?"
        r"(?:urgen\w*|dringend|emergen\w*|eilig)",
        r"no rush", r"no hurry", r"kein stress", r"keine eile", r"rien ne presse", r"sin prisa",
        r"nessuna fretta", r"sem pressa", r"geen haast"),
    # asks whether something is urgent: "is it urgent …?", "c'est urgent ou …?"
    Rule(r"^\W*(?:is (?:it|this|that)|ist (?:es|das)|est-ce|c'est|es|e|is het)\s+"
               r"(?:urgen\w*|dringend)\b.*\?"),
    # talks about emergencies, not of one: numbers, exits, drills, settings
    _rx(r"emergenc\w* (?:number|contact|exit|kit|bag|plan|services? number)",
        r"notfall(?:nummer|kontakt|plan|apotheke|koffer|ausgang)\w*",
        r"numero (?:d'|de |di )?(?:urgence|emergencias?|emergenza)",
        r"fire (?:drill|test|extinguisher|safety|insurance|exit|station)", r"probealarm",
        r"(?:as|als|comme|como|come) (?:urgent|dringend|urgente)",
        r"urgent (?:flag|label|tag|notifications?)", r"by accident",
        r"in case of", r"what if", r"if the (?:\w+ ){1,2}(?:goes|is|gets)"),
)

# What can be down, and how it is said to be down (for the service row of URGENT).
SERVICE = (r"(?:servers?|site|website|web|app|shop|system|database|network|checkout|payments?|"
           r"servidor(?:es)?|serveur|sito|webseite|netzwerk|webshop|kasse|terminal|loja|tienda|"
           r"negozio|winkel|kassa\w*|produktion|production|produccion|produzione|producao|"
           r"productie)")
DOWN = (r"(?:is down|are down|went down|'s down|ist down|down|not responding|failing|offline|"
        r"ausgefallen|steht still|stopped|geht nicht mehr|funktioniert nicht|en panne|"
        r"ne marche plus|caido|apagad\w*|giu|caiu|fora do ar|ligt plat|werkt niet|"
        r"doe[nt] het niet meer|(?:no|non|nao) (?:funciona|funziona))")

# Urgent: needs the owner now. Keywords first, then emergencies told without them.
URGENT: tuple[Rule, ...] = (
    # the words in seven languages
    _rx(r"urgen\w*", r"asap", r"emergen\w*", r"immediat\w*", r"imediat\w*", r"inmediat\w*",
        r"right now", r"dringend\w*", r"sofort", r"notfall\w*", r"tout de suite",
        r"ahora mismo", r"subito", r"agora mesmo", r"nu meteen", r"spoed\w*", r"noodgeval\w*"),
    # fire and smoke
    _rx(r"fire(?! (?:off|up|away))", r"smoke", r"flames", r"feuer\w*", r"brennt", r"rauch",
        r"er is brand", r"in brand", r"brand(?:alarm| in)", r"feu", r"incendi\w*",
        r"antincendio", r"fumee", r"fuego", r"humo", r"c'e fumo", r"fumo (?:che|dal|dalla|in)",
        r"fogo", r"fumaca", r"rook"),
    # water and gas
    _rx(r"burst", r"flood\w*", r"gas ?leak", r"rohrbruch", r"wasserrohr\w*", r"unter wasser",
        r"uberschwemm\w*", r"gasleck", r"inond\w*", r"fuite d'eau", r"fuite de gaz",
        r"inund\w*", r"allag\w*", r"water is pouring", r"pouring through", r"fuga de agua",
        r"fuga d'acqua", r"perdita d'acqua", r"vazamento de agua", r"waterlek", r"wasserschaden",
        r"water everywhere", r"leaking water", r"wasser uberall",
        r"esce acqua", r"water lekt", r"(?:smells?|smelling) (?:of )?gas",
        r"riecht (?:es )?nach gas",
        r"odeur de gaz", r"huele a gas", r"puzza di gas", r"cheiro (?:a|de) gas", r"ruikt naar gas",
        r"power (?:is )?out", r"power cut", r"stromausfall", r"panne de courant",
        r"se ha ido la luz",
        r"apagon", r"blackout", r"stroomstoring", r"onder water", r"overstroom\w*", r"gaslek",
        r"(?:pipe|tuberia|tubo|cano|leiding)s? (?:\w+ )?(?:burst|broke|rota|roto|rotto|"
        r"estourou|gesprongen|kapot)", r"(?:rota|roto|rotto|estourou|gesprongen) (?:\w+ )?"
        r"(?:pipe|tuberia|tubo|cano|leiding)", r"rott\w* un tubo"),
    # people hurt or in danger
    _rx(r"ambulanc\w*", r"krankenwagen", r"notarzt", r"ambulanza", r"ambulancia",
        r"accident\w*", r"unfall", r"incidente", r"acidente", r"ongeluk", r"had a fall",
        r"collapsed", r"fell (?:and|down|off|from)", r"gesturzt", r"fait une chute", r"se ha caido",
        r"se cayo", r"e cadut[oa]", r"caiu", r"is gevallen", r"not breathing", r"atmet nicht",
        r"ne respire plus", r"no respira", r"non respira", r"nao respira", r"ademt niet", r"bloedt",
        r"unconscious", r"bewusstlos", r"inconscient\w*", r"svenut\w*",
        r"desmai\w*", r"bewusteloos", r"heart attack", r"herzinfarkt", r"infarto",
        r"hartaanval", r"bleeding", r"blutet", r"saigne", r"sangr\w*", r"can't breathe",
        r"(?:rushed|taken) to (?:the )?hospital", r"locked out", r"ausgesperrt",
        r"(?:trouble|difficulty) breathing", r"respire mal",
        r"respira mal", r"atmet schwer", r"hit a (?:cyclist|pedestrian|child|car)", r"angefahren",
        r"renverse\w*", r"atropell\w*", r"investit\w*", r"atropelad\w*", r"aangereden"),
    # break-ins and theft
    _rx(r"broken into", r"break-in", r"burglar\w*", r"stole", r"stolen", r"robbed",
        r"eingebrochen", r"einbruch", r"gestohlen", r"cambriol\w*", r"robad\w*", r"robaron",
        r"han robado", r"ladri", r"furto", r"derubat\w*", r"assalt\w*", r"roubad\w*",
        r"ingebroken", r"inbraak", r"gestolen", r"beroofd"),
    # a cry for help
    Rule(r"\b(?:help|hilfe|aiuto|socorro|ajuda)\b\s*!|\bau secours\b"),
    # a service down, customers hit
    _rx(SERVICE + r"\b.{0,25}" + DOWN,
        r"outage", r"customers are complaining", r"kunden beschweren", r"clients se plaignent",
        r"clientes se quejan", r"clienti si lamentano", r"clientes estao reclamando",
        r"klanten klagen", r"aucune commande",
        r"(?:nobody|no one|niemand|keiner|nadie|nessuno|ninguem|personne) "
        r"(?:can|kann|puede|riesce|consegue|kan|ne peut)\b.{0,12}"
        r"(?:pay|order|bezahlen|pagar|pagare|betalen|afrekenen|payer)"),
    # come or call now
    _rx(r"(?:come|call|get|ven|vem|kom|vieni|viens|rentre|komm)\b.{0,25}"
        r"\b(?:now|ya|agora|nu|adesso|maintenant|jetzt)"),
)

# Social: the message is only these (and FILLER, and a name after one of them).
# (kind, pattern) rows; the kind picks the quick reply.
SOCIAL: tuple[tuple[str, tuple[Rule, ...]], ...] = (
    # "thanks for …" up to the end of the clause, when the clause asks for nothing
    ("thanks", _phrases(
        r"(?:thanks|thank you|thx|danke|vielen dank|merci|gracias|grazie|obrigad[oa]|bedankt|"
        r"dank je(?: wel)?)\s+(?:for|fur|pour|por|per|pela|pelo|voor)\b(?:\s+(?!(?:and|und|et|"
        r"y|e|en|but|aber|mais|pero|ma|mas|maar|please|bitte|can|could|also)\b)[\w'-]+){1,6}")),
    ("thanks", _phrases(
        r"thanks?(?: a lot| so much| a ton| again)?", r"thank (?:you|u)", r"thx", r"ty",
        r"tysm", r"cheers", r"thanks a million", r"(?:thanks|thank you|grazie|merci|gracias|danke) "
        r"(?:for everything|di tutto|pour tout|por todo|fur alles)",
        r"(?:you're|you are) (?:a star|the best|amazing|awesome)", r"du bist (?:der|die) beste",
        r"t'es (?:le|la) meilleure?", r"eres (?:el|la) mejor", r"eres un crack", r"crack",
        r"sei (?:il|la) migliore", r"(?:voce|tu) e demais", r"je bent de beste",
        r"much appreciated", r"appreciate it", r"danke(?: ?schon| sehr)?",
        r"vielen (?:lieben )?dank", r"(?:great|good|nice) (?:job|work)", r"gute arbeit",
        r"beau travail",
        r"buen trabajo", r"(?:ottimo|bel|buon) lavoro", r"bom trabalho", r"goed (?:gedaan|werk)",
        r"merci(?: beaucoup| bien)?", r"(?:muchas |mil )?gracias",
        r"grazie(?: mille)?", r"(?:muito )?obrigad[oa]", r"valeu", r"brigad[oa]",
        r"dank (?:je|u)(?: wel)?", r"dankjewel", r"dankuwel", r"bedankt",
        # "that helped" and its kin
        r"(?:that|this|it) (?:really )?(?:helped|was (?:very |really |super )?"
        r"(?:helpful|useful))(?: a lot)?", r"(?:very|super) helpful",
        r"das hat (?:mir )?(?:sehr )?geholfen", r"ca m'a (?:bien |beaucoup )?aide",
        r"me (?:ha )?ayudado(?: mucho)?", r"me ayudo(?: mucho)?", r"mi e stato (?:molto )?utile",
        r"mi hai aiutato", r"(?:me )?ajudou(?: muito)?", r"dat (?:hielp|heeft geholpen)")),
    ("goodbye", _phrases(
        r"bye(?: bye)?", r"goodbye", r"bisous", r"a ce soir",
        r"a (?:esta noche|stasera|logo a noite)", r"good ?night", r"night night",
        r"catch you later", r"see (?:you|ya|u)(?: later| soon| tomorrow)?",
        r"talk (?:to you )?(?:later|soon|tomorrow)", r"later", r"ttyl", r"take care",
        r"have a (?:nice|good|great|lovely) (?:day|evening|weekend|night|one)",
        r"tschu(?:s|ss)", r"bis (?:spater|bald|morgen|dann|gleich)", r"gute nacht",
        r"schonen (?:abend|tag|feierabend)", r"schones wochenende", r"au revoir",
        r"a plus(?: tard)?", r"a (?:bientot|demain)", r"bonne (?:nuit|soiree|journee|semaine)",
        r"bon week-?end", r"adios", r"hasta (?:luego|manana|pronto)", r"nos vemos",
        r"buenas noches", r"chao", r"hablamos(?: luego| manana)?", r"arrivederci",
        r"a (?:dopo|domani|presto)", r"buonanotte", r"buona (?:serata|giornata|notte)",
        r"ci vediamo(?: domani| dopo)?", r"tchau", r"ate (?:logo|mais|amanha|ja)",
        r"boa noite", r"tot (?:ziens|straks|morgen|zo|later)", r"doei", r"welterusten",
        r"fijne (?:avond|dag)", r"fijn weekend")),
    ("greeting", _phrases(
        r"hi", r"hello", r"hey+", r"ehi", r"he(?=\s*[!,])", r"long time no see", r"heya", r"hiya",
        r"howdy", r"yo",
        r"good (?:morning|afternoon|evening|day)", r"morning", r"afternoon", r"evening",
        r"na(?: du)?(?=\s*[?!,.]|$)", r"hallo",
        r"guten (?:morgen|tag|abend)", r"moin(?: moin)?", r"servus", r"gruss dich", r"gruezi",
        r"bonjour", r"bonsoir", r"salut", r"coucou", r"hola", r"buen(?:os)? dias",
        r"buenas(?: tardes)?", r"ciao", r"buongiorno", r"buonasera", r"salve", r"ola", r"oi",
        r"bom dia", r"boa tarde", r"hoi", r"goe(?:de|ie)(?:morgen|middag|navond)")),
    # small talk counts as a greeting
    ("greeting", _phrases(
        r"how are you(?: doing| today)?", r"how(?:'s| is) it going", r"how are things",
        r"what'?s up", r"how have you been", r"hope (?:you're|you are) (?:well|good|doing well)",
        r"hope all is well",
        r"alles (?:gut|klar|goed)(?: bei (?:dir|euch|ihnen)| met (?:je|jou|u))?",
        r"(?:como|come) va(?: todo| tutto)?", r"wie geht'?s(?: dir| ihnen| euch)?",
        r"wie geht es (?:dir|ihnen|euch)", r"ca va(?: bien)?",
        r"comment (?:ca va|vas-tu|allez-vous)",
        r"que tal", r"como (?:estas|esta|va|vai)", r"todo bien", r"come (?:stai|va|state)",
        r"tutto (?:bene|ok)", r"tudo (?:bem|bom|certo)", r"hoe gaat (?:het|het met je)",
        r"hoe is het")),
    ("ack", _phrases(
        r"ok(?:ay)?", r"okey", r"oke", r"k+", r"cool", r"nice", r"great", r"awesome", r"perfect",
        r"sweet", r"lol", r"lmao", r"(?:ha)+h?", r"hehe", r"sounds good", r"got it", r"noted",
        r"understood", r"alright", r"all right", r"sure", r"fine", r"fair enough",
        r"makes sense", r"brilliant", r"no (?:problem|worries)", r"np", r"will do", r"good",
        r"super",
        r"alles (?:klar|gut)", r"passt", r"genau", r"gut", r"toll", r"klasse", r"parfait",
        r"d'accord", r"genial", r"vale", r"perfecto", r"de acuerdo", r"(?:ja)+", r"bueno",
        r"va bene", r"perfetto", r"ottimo", r"certo", r"bello", r"(?:ah)+h?", r"beleza",
        r"perfeito", r"otimo", r"legal", r"k{3,}", r"top", r"prima", r"goed", r"mooi",
        r"helemaal goed", r"yes", r"yep", r"yeah", r"oui", r"sim")),
)
# Words that may sit between social phrases without making a request.
FILLER = _rx(
    r"you", r"u", r"so", r"much", r"very", r"really", r"a", r"lot", r"all", r"again",
    r"everyone", r"everybody", r"guys", r"folks", r"there", r"dear", r"friend", r"mate",
    r"buddy", r"too", r"and", r"oh", r"ah", r"wow", r"und", r"auch", r"nochmal", r"sehr",
    r"leute", r"dir", r"euch", r"ihr", r"et", r"aussi", r"encore", r"tres", r"tous", r"toi",
    r"y", r"tambien", r"todos", r"mucho", r"muy", r"e", r"anche", r"tanto", r"tutti",
    r"molto", r"tambem", r"muito", r"gente", r"en", r"ook", r"allemaal", r"jullie", r"heel",
    r"noch", r"nog", r"dich", r"that's", r"that is", r"t'es", r"tu es", r"pessoal", r"lieben")
SEPARATOR = Rule(r"[\W_]+")
NAME = Rule(r"[^\W\d_][\w'-]*")

# Question: a "?" anywhere, or one of these at the start of a sentence.
QUESTION_MARK = Rule(r"[?¿]")
QUESTION: tuple[Rule, ...] = (
    # English
    Rule(r"(?:what|what's|whats|when|where|who|whom|whose|why|how|which|is|are|am|was|"
               r"were|do|does|did|can|could|would|will|should|shall|has|have|had|isn't|"
               r"aren't|don't|doesn't|didn't|can't|won't|any (?:news|idea|update)s?)\b"),
    # German, with verb-first questions
    Rule(r"(?:was|wann|wo|woher|wohin|wer|wen|wem|warum|wieso|weshalb|wie|welche[rsnm]?|"
               r"hast|hat|habt|bist|ist|sind|seid|kannst|kann|konnen|konntest|wurdest|willst|"
               r"gibt es|wei(?:ss|ß)t|darf|soll|um wie ?viel uhr)\b"),
    # French, with inverted "-tu"/"-vous" questions
    Rule(r"(?:qu'est-ce|quoi|quand|ou|qui|pourquoi|comment|quel(?:le)?s?|combien|est-ce|"
               r"[\w']+-(?:tu|vous|t-il|t-elle|il|elle|on)|tu (?:sais|connais|as vu)|"
               r"a quelle heure)\b"),
    # Spanish, Italian, Portuguese
    Rule(r"(?:que|cuando|donde|quien|cual(?:es)?|cuant[oa]s?|quant[oa]s|por que|como|puedes|"
               r"podrias|hay|sabes|me (?:puedes|podrias|dices)|che|cosa|quando|dove|dov'e|chi|"
               r"perche|come|qual[ei]?|quant[oaie]|puoi|potresti|c'e|mi (?:sai|puoi|dici)|"
               r"o que|onde|quem|porque|pode|podes|tem|sabe|sai|voce (?:sabe|pode|tem|viu)|"
               r"a (?:que|che) h?or[ae]s?)\b"),
    # Dutch
    Rule(r"(?:wat|wanneer|waar|wie|waarom|hoe|welke?|hoeveel|kun|kan|kunt|heb|hebt|"
               r"heeft|ben|zijn|weet|wil|wilt|gaat|komt|mag|zou)\b"),
)
SENTENCE_START = Rule(r"[.!:;]\s+")
# "and", "also", "but" between the thanks and the question: "Thanks. Also, could you …"
CONNECTOR = Rule(r"^[\W_]*(?:(?:and|und|et|y|e|en|also|auch|aussi|tambien|anche|tambem|ook|"
                       r"but|aber|mais|pero|ma|mas|maar)[\W_]+)*")
