"""One adapter per source format, each turning it into the canonical long table (:mod:`audit.contract.columns`)."""
