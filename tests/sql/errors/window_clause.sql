SELECT () FROM (SELECT CASE WHEN a 'x' END k window t)
