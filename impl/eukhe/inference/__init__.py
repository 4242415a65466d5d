"""The inference layer (inference.md S6): the quirks rulebook, forced calls, the strict plan,
capabilities, service tiers and prices, the thinking ladder, the model catalog and models.json."""
