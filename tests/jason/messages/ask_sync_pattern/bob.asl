price(beer, 3).
