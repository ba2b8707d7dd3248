"""Every finding's own page (docs/findings/ID.md), made from what the rules declare, so an id another change adds
gets its page on the next `python scripts/gen_findings_doc.py`: its severities, category, area and title from its
FindingSpec, how its fix is proven (`proofs.json`, written by that script from tests/fixes/fix_kinds.py), and the
hand-written text of `texts/ID.md` where there is one. `neurondoctor explain ID` prints the same page, so a host
without a checkout reads what the docs say.
"""
