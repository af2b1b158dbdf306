"""Cleaning animation: tracking springs (:mod:`.springs`), the tracking filter and splicing
(:mod:`.tracking`), ground contacts (:mod:`.contacts`), the pop detector (:mod:`.pops`), per-joint pop
repair (:mod:`.repair`) and foot locking (:mod:`.footlock`)."""
