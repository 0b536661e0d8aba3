"""Monthly SLA reports: gathering the numbers, classifying outages, rendering."""
