price(beer, 3).
price(wine, 9).
