price(beer, 3).
price(wine, 9).
price(tea, 1).
