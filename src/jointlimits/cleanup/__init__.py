"""Cleaning animation: tracking springs (:mod:`.springs`), the tracking filter and splicing
(:mod:`.tracking`), the pop detector (:mod:`.pops`) and foot locking (:mod:`.footlock`)."""
