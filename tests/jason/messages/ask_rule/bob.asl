price(beer, 3).
price(wine, 9).
cheap(X) :- price(X, P) & P < 5.
