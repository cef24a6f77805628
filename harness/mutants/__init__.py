"""`toolproof mutants`: built-in semantic mutants of the reference (``catalogue.py``), put into a
server process by an import hook (``apply.py``, ``server.py``), and a campaign that runs a corpus
against each (``campaign.py``). docs/mutants.md."""
