"""Word lists the demo and benchmark worlds draw names and post texts from."""


def word_list(text: str) -> tuple[str, ...]:
    """The words of ``text``, split on whitespace, as a tuple (for ``random.choice``)."""
    return tuple(text.split())


FIRST_NAMES = word_list(
    "ada alan amber ana anya arlo aurora basil bea cai cleo dara eli elin emil esme "
    "felix fern gus hana ines iris ivo jade jun kai kira lars lea lin luca mae mara "
    "mei milo nia nico noor olga omar otto pax quinn rae remy rosa sami sana taro "
    "tess uma vera wen xia yara yuki zane zoe"
)
LAST_NAMES = word_list(
    "fox wren oak reed stone brook vale moss ash finch lark pike hart frost glen "
    "heath birch cove dune fern hollow marsh pine quarry ridge sage thorn vane wood"
)
ENGLISH_WORDS = word_list(
    "the a of morning coffee rain train city river light night music book garden "
    "today finally again new old small quiet loud bright slow fast walk read write "
    "cook build fix lost found think feel see hear weekend market friends tea bread "
    "code bug release deploy sunset clouds snow spring summer autumn winter cat dog "
    "bike bus ferry mountain lake sea park street window kitchen office idea plan "
    "dream sleep run swim laugh wonder maybe really just still never always here"
)
