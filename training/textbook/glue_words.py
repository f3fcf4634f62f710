"""Word lists and descriptions of the glue area (glue.py): what the makers draw from."""

from __future__ import annotations

from ..lexicon import NOUNS

# --------------------------------------------------------------------------- word lists

# (English, English object form, Korean, person)
PRONOUNS = (("I", "me", "저", "1s"), ("you", "you", "당신", "2"), ("he", "him", "그", "3s"),
            ("she", "her", "그녀", "3s"), ("we", "us", "우리", "1p"),
            ("they", "them", "그들", "3p"))
# possessive (English, Korean word before the noun, English pronoun for later mention)
OWNERS = (("my", "제"), ("your", "당신의"), ("his", "그의"), ("her", "그녀의"))
KIN = tuple(n for n in NOUNS if "kin" in n.tags and "person" in n.tags)
# people who can be tall or short: (English words, Korean, person, pronoun for "she/he")
JOBS = ("teacher", "student", "doctor", "police officer", "singer", "nurse")
JOB_NOUNS = tuple(n for n in NOUNS if n.en in JOBS)

# a nationality's nouns: (English, Korean, verbs that take it)
NAT_NOUNS = (("food", "음식", ("like", "eat", "make", "love")),
             ("music", "음악", ("like", "listen to", "love")),
             ("movies", "영화", ("like", "watch", "love")),
             ("songs", "노래", ("like", "listen to", "sing")),
             ("dramas", "드라마", ("like", "watch")),
             ("history", "역사", ("study", "like")),
             ("culture", "문화", ("study", "like")),
             ("friends", "친구", ("have", "meet")))
# English verb -> (Korean lemma, past English)
NAT_VERBS = {"like": ("좋아하다", "liked"), "eat": ("먹다", "ate"), "make": ("만들다", "made"),
             "listen to": ("듣다", "listened to"), "watch": ("보다", "watched"),
             "study": ("공부하다", "studied"), "meet": ("만나다", "met")}

# favourite: category (English, Korean) -> members (English, Korean)
FAVOURITES = {
    ("season", "계절"): (("spring", "봄"), ("summer", "여름"), ("autumn", "가을"),
                       ("winter", "겨울")),
    ("food", "음식"): (("kimchi", "김치"), ("bibimbap", "비빔밥"), ("pizza", "피자"),
                     ("bread", "빵"), ("bulgogi", "불고기"), ("noodles", "국수")),
    ("fruit", "과일"): (("apples", "사과"), ("bananas", "바나나"), ("strawberries", "딸기"),
                      ("grapes", "포도"), ("watermelon", "수박")),
    ("sport", "운동"): (("soccer", "축구"), ("baseball", "야구"), ("tennis", "테니스"),
                      ("swimming", "수영"), ("basketball", "농구")),
    ("drink", "음료"): (("coffee", "커피"), ("tea", "차"), ("milk", "우유"), ("juice", "주스")),
    ("animal", "동물"): (("dogs", "개"), ("cats", "고양이"), ("rabbits", "토끼")),
    ("day", "요일"): (("Friday", "금요일"), ("Saturday", "토요일"), ("Sunday", "일요일")),
    ("subject", "과목"): (("history", "역사"), ("music", "음악"), ("math", "수학"),
                        ("English", "영어"), ("Korean", "한국어")),
    ("color", "색"): (("red", "빨간색"), ("blue", "파란색"), ("yellow", "노란색"),
                     ("black", "검은색"), ("white", "하얀색")),
}
# the one who likes it: English possessive, Korean subject
FAV_OWNERS = (("my", "제가"), ("your", "당신이"), ("his", "그가"), ("her", "그녀가"),
              ("our", "우리가"))

# means of transport: English after "by", Korean (+ 로/으로)
MEANS = (("bus", "버스"), ("subway", "지하철"), ("taxi", "택시"), ("train", "기차"),
         ("bicycle", "자전거"), ("car", "차"))
# destinations: English phrase after go, Korean word + 에
DESTINATIONS = ((("to", "work"), "회사"), (("to", "school"), "학교"), (("home",), "집"),
                (("to", "the", "library"), "도서관"), (("to", "the", "hospital"), "병원"),
                (("to", "the", "market"), "시장"), (("to", "Seoul"), "서울"),
                (("to", "the", "airport"), "공항"), (("to", "the", "office"), "사무실"))

# activities: English base, -ing, third person, Korean (object, lemma); an activity with its
# object written out (English object words, Korean object word)
ACTIVITIES = (
    ("study", "studying", (), "", "공부하다"),
    ("cook", "cooking", (), "", "요리하다"),
    ("exercise", "exercising", (), "", "운동하다"),
    ("drive", "driving", (), "", "운전하다"),
    ("work", "working", (), "", "일하다"),
    ("travel", "traveling", (), "", "여행하다"),
    ("rest", "resting", (), "", "쉬다"),
    ("clean", "cleaning", (), "", "청소하다"),
    ("take a walk", "taking a walk", (), "", "산책하다"),
    ("read", "reading", ("books",), "책을", "읽다"),
    ("eat", "eating", (), "", "먹다"),
    ("listen to", "listening to", ("music",), "음악을", "듣다"),
    ("watch", "watching", ("TV",), "TV를", "보다"),
    ("drink", "drinking", ("coffee",), "커피를", "마시다"),
    ("sing", "singing", (), "", "노래하다"),
    ("wash", "washing", ("the", "dishes"), "설거지를", "하다"),
    ("do", "doing", ("homework",), "숙제를", "하다"),
    ("wait", "waiting", (), "", "기다리다"),
    ("talk", "talking", ("on", "the", "phone"), "전화를", "하다"),
)
# the -기로 했어요 plans: English after "decided to", Korean before 기로 (object + stem)
PLANS = (
    (("study", "Korean"), ("한국어를", "공부하")),
    (("learn", "Korean"), ("한국어를", "배우")),
    (("exercise", "every", "day"), ("매일", "운동하")),
    (("travel", "to", "Korea"), ("한국으로", "여행가")),
    (("meet", "at", "the", "cafe"), ("카페에서", "만나")),
    (("eat", "together"), ("같이", "먹")),
    (("buy", "a", "car"), ("차를", "사")),
    (("quit", "smoking"), ("담배를", "끊")),
    (("get", "up", "early"), ("일찍", "일어나")),
    (("go", "to", "the", "beach"), ("해변에", "가")),
    (("read", "more", "books"), ("책을", "더", "많이", "읽")),
    (("move", "to", "Seoul"), ("서울로", "이사하")),
    (("see", "a", "movie"), ("영화를", "보")),
    (("learn", "the", "piano"), ("피아노를", "배우")),
    (("drink", "less", "coffee"), ("커피를", "덜", "마시")),
    (("make", "dinner"), ("저녁을", "만들")),
)
# TV is written TV in Korean too (TV를 봐요): 텔레비전 is the lexicon's "television"
# -(으)면서 pairs: (English -ing phrase, Korean object words + lemma)
WHILE_A = (
    (("listening", "to", "music"), ("음악을",), "듣다"),
    (("watching", "TV"), ("TV를",), "보다"),
    (("drinking", "coffee"), ("커피를",), "마시다"),
    (("walking",), (), "걷다"),
    (("singing",), (), "노래하다"),
    (("eating", "bread"), ("빵을",), "먹다"),
    (("talking", "on", "the", "phone"), ("전화를",), "하다"),
    (("smiling",), (), "웃다"),
    (("driving",), (), "운전하다"),
)
WHILE_B = (
    ("study", ("studies", "studied"), (), (), "공부하다"),
    ("eat", ("eats", "ate"), ("breakfast",), ("아침을",), "먹다"),
    ("cook", ("cooks", "cooked"), (), (), "요리하다"),
    ("clean", ("cleans", "cleaned"), ("the", "room"), ("방을",), "청소하다"),
    ("work", ("works", "worked"), (), (), "일하다"),
    ("read", ("reads", "read"), ("the", "newspaper"), ("신문을",), "읽다"),
    ("exercise", ("exercises", "exercised"), (), (), "운동하다"),
    ("wait", ("waits", "waited"), (), (), "기다리다"),
    ("talk", ("talks", "talked"), (), (), "이야기하다"),
)
# -는데 first clauses (Korean -> English only): (English clause, Korean clause words, kind)
# with an adjective second clause about it
BAGS = (("bag", "가방"), ("phone", "휴대폰"), ("shirt", "셔츠"), ("shoes", "신발"),
        ("restaurant", "식당"), ("room", "방"), ("car", "차"), ("book", "책"))
CONTRAST_ADJ = (("pretty", "예쁘다", "expensive", "비싸다"), ("small", "작다", "clean", "깨끗하다"),
                ("big", "크다", "dirty", "더럽다"), ("cheap", "싸다", "good", "좋다"),
                ("expensive", "비싸다", "good", "좋다"),
                ("good", "좋다", "expensive", "비싸다"), ("new", "새롭다", "small", "작다"))
# mass food and drink that take "some" with 좀
SOME = (("water", "물"), ("coffee", "커피"), ("tea", "차"), ("milk", "우유"), ("rice", "밥"),
        ("kimchi", "김치"), ("bread", "빵"), ("juice", "주스"), ("soup", "국"))
# 좀 + adjective: (English subject words, Korean subject, adjective pairs that fit it)
SOFT_THINGS = ((("this", "bag"), "이 가방은", (("expensive", "비싸다"), ("big", "크다"))),
               (("Korean",), "한국어는", (("difficult", "어렵다"),)),
               (("the", "school"), "학교는", (("far", "멀다"),)),
               (("the", "kimchi"), "김치는", (("spicy", "맵다"),)),
               (("this", "room"), "이 방은", (("small", "작다"), ("cold", "춥다"))),
               (("the", "exam"), "시험은", (("difficult", "어렵다"),)),
               (("these", "shoes"), "이 신발은", (("small", "작다"), ("expensive", "비싸다"))))
SOFT_PERSON_ADJ = (("busy", "바쁘다"), ("tired", "피곤하다"))
# -는데 with an activity (Korean -> English only): English, Korean, what it was like
BG_ACTS = ((("study", "Korean"), "한국어를 공부하는데", (("difficult", "어렵다"),
                                                     ("fun", "재미있다"))),
           (("do", "homework"), "숙제를 하는데", (("boring", "재미없다"), ("difficult", "어렵다"))),
           (("read", "the", "book"), "책을 읽는데", (("fun", "재미있다"), ("boring", "재미없다"))),
           (("watch", "the", "drama"), "드라마를 보는데", (("fun", "재미있다"),)),
           (("learn", "the", "piano"), "피아노를 배우는데", (("difficult", "어렵다"),
                                                          ("easy", "쉽다"))),
           (("cook", "bulgogi"), "불고기를 만드는데", (("easy", "쉽다"),)))

# construction -> (English, Korean) description, for the knows view
DESCRIPTIONS = {
    "glue_some_please": (
        "좀 with food and drink: 'some' (Please give me some water. <-> 물 좀 주세요.)",
        "음식·음료와 좀: some (물 좀 주세요. <-> Please give me some water.)"),
    "glue_soft_request": (
        "좀 softening a request, read Korean -> English (창문을 좀 열어 주세요.)",
        "부탁을 부드럽게 하는 좀, 한국어 -> 영어로만 (창문을 좀 열어 주세요.)"),
    "glue_soft_adjective": (
        "좀 with an adjective: 'a little', read Korean -> English (이 가방은 좀 비싸요.)",
        "형용사와 좀: a little, 한국어 -> 영어로만 (이 가방은 좀 비싸요.)"),
    "glue_nationality": (
        "Nationality before a noun (I like Korean food. <-> 저는 한국 음식을 좋아해요.)",
        "명사 앞 나라 이름 (저는 한국 음식을 좋아해요.)"),
    "glue_nationality_adj": (
        "Nationality and noun with an adjective (Korean food is delicious.)",
        "나라 이름 + 명사와 형용사 (한국 음식은 맛있어요.)"),
    "glue_tall": (
        "Tall and short: 키가 크다 / 작다, compared with 보다 (My older brother is taller "
        "than me. <-> 제 형은 저보다 키가 더 커요.)",
        "키가 크다 / 작다, 보다로 비교 (제 형은 저보다 키가 더 커요.)"),
    "glue_tall_person": (
        "A tall person: 키가 큰 사람 (Mary is a tall person.)",
        "키가 큰 사람 (메리는 키가 큰 사람이에요.)"),
    "glue_favourite": (
        "Favourite: 제일 좋아하는 (Summer is my favorite season. <-> 여름은 제가 제일 "
        "좋아하는 계절이에요.)",
        "제일 좋아하는 (여름은 제가 제일 좋아하는 계절이에요.)"),
    "glue_transport": (
        "Going by a means of transport (I go to school by bus. <-> 저는 버스로 학교에 가요.)",
        "교통수단으로 가기 (저는 버스로 학교에 가요.)"),
    "glue_when_activity": (
        "-(으)ㄹ 때 with an activity (When I study, I listen to music. <-> 저는 공부할 때 "
        "음악을 들어요.)",
        "활동 동사와 -(으)ㄹ 때 (저는 공부할 때 음악을 들어요.)"),
    "glue_background": (
        "-는데 / -(으)ㄴ데, read Korean -> English as 'but' (이 가방은 예쁜데 비싸요.)",
        "-는데 / -(으)ㄴ데, 한국어 -> 영어로만 (이 가방은 예쁜데 비싸요.)"),
    "glue_decided": (
        "-기로 했어요: decided to (I decided to study Korean. <-> 저는 한국어를 공부하기로 "
        "했어요.)",
        "-기로 했어요 (저는 한국어를 공부하기로 했어요.)"),
    "glue_while": (
        "-(으)면서: while (I study while listening to music. <-> 저는 음악을 들으면서 "
        "공부해요.)",
        "-(으)면서 (저는 음악을 들으면서 공부해요.)"),
}
