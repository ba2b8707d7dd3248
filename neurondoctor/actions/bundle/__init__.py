"""`neurondoctor bundle`: one redacted support archive (sos report's shape, small)."""
