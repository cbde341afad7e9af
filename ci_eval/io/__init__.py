"""Files in and out: JSON read with the position of every container (``jsonpos``), JSON written
fast and byte-for-byte like ``json.dump`` (``jsonwrite``), and atomic, readable writes
(``files``). No eval-set or results knowledge lives here."""
