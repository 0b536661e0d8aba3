"""GPU health, one judgement for two sources: an NVIDIA dcgm-exporter's ``/metrics`` text
(the ``dcgm`` probe kind) and the readings a box's ``slamon agent`` pushes (``heartbeat``).

``readings``: a GPU's reading and a snapshot of a box's GPUs, whatever their source;
``dcgm_text``: a scrape read into a snapshot; ``wire``: a snapshot as the JSON an agent pushes;
``counters``: what one reading is compared with at the next, kept as JSON between probes;
``health``: the rules, a snapshot and the counters judged into a ``GpuHealth``; ``pushed``: an
agent's pushed readings judged, each once. All pure but ``pushed``, which reads the heartbeats.
"""
