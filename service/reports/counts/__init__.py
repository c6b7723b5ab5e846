"""Kept report counts: ``repository`` keeps them in the writers' transactions and reads them."""
