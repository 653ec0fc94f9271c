"""A small corpus of notes that the ranking tests check against FTS5's own bm25."""

CORPUS = [
    "Dentist appointment on Tuesday at nine",
    "Call the dentist again about the crown, dentist said two weeks",
    "Buy oat milk and coffee beans",
    "Coffee with Ana on Friday; she likes flat white coffee",
    "The quarterly report is due on Friday",
    "Ana's birthday is on the 14th of March, she wants a book about coffee",
    "Renew the passport before the trip to Lisbon",
    "Lisbon trip: book the hotel near the river and the coffee place",
]
