"""`neurondoctor cache`: the compile cache, counted (status)."""
